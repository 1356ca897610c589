export { startEmbeddedPostgres, findFreePort, type EmbeddedCluster, type EmbeddedOptions } from './embedded.js';
export { bestLocale } from './embedded-cluster.js';
export { runMigrations, loadMigrations, ensureDatabase, SCHEMA_DIR, type Migration } from './migrate.js';
export {
  openDataSource,
  pgPoolOf,
  poolConfig,
  DEFAULT_SESSION_TIMEOUTS,
  type SessionTimeouts,
  type EntityList,
  type DataSource,
  type EntityManager,
} from './data-source.js';
export { withAdvisoryLock, ADVISORY_LOCKS } from './advisory-lock.js';
export { createTestDatabase } from './test-database.js';
export { countRoundTrips, type RoundTripCounter, type RoundTripOptions } from './round-trips.js';
export {
  HotSql,
  hotStatement,
  preparedStatement,
  warmPool,
  fixedHotStatements,
  type HotSqlDiagnostics,
  type HotSqlOptions,
  type HotStatement,
} from './hot-sql.js';
export { transactionInOneRoundTrip, sqlLiteral, type RoundTripPart, type RoundTripClient } from './one-round-trip.js';
