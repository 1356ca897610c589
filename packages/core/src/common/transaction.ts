import { preparedStatement, type HotStatement } from '@svc/db';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { notFound } from './errors.js';
import type { CallContext } from './context.js';

/** Runs in the caller's transaction when there is one, else in a new one. */
export function inTransaction<T>(
  db: DataSource,
  ctx: CallContext,
  work: (tx: EntityManager) => Promise<T>,
): Promise<T> {
  return ctx.tx ? work(ctx.tx) : db.transaction(work);
}

/** A manager for reads: the caller's transaction when there is one. */
export function reader(db: DataSource, ctx: CallContext): EntityManager {
  return ctx.tx ?? db.manager;
}

/**
 * Serialises a team's quota-checked creates (tenants, event types, endpoints) for the rest of the transaction.
 * An advisory lock, not a row lock on `teams`: every insert that references the team (messages, deliveries,
 * charges) takes FOR KEY SHARE on that row, and a FOR UPDATE here would make all of them wait behind any
 * configuration write of the team.
 */
export async function lockTeam(tx: EntityManager, teamId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('team-quota:' || $1, 0))`, [teamId]);
}

/**
 * Serialises everything that adds to a team's pending deliveries or stored content for the rest of the transaction
 * (admission takes it in admission_begin, 0016_admission_batches.sql), so a limit read after it holds when the
 * transaction writes: concurrent replays and admissions cannot overshoot max_pending_deliveries together.
 */
export async function lockTeamQueue(tx: EntityManager, teamId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('admission-queue:' || $1, 0))`, [teamId]);
}

/**
 * Serialises a team's replay starts for the rest of the transaction, so that max_active_replays, counted after it,
 * holds when the transaction writes. A key of its own: a replay start does not wait for configuration creates.
 */
export async function lockTeamReplays(tx: EntityManager, teamId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('team-replays:' || $1, 0))`, [teamId]);
}

/**
 * Locks one of the team's rows for a change, or throws not_found. FOR NO KEY UPDATE: it serialises writers of the
 * row but, unlike FOR UPDATE, does not block the FOR KEY SHARE that inserts referencing the row take (a message
 * or delivery of an endpoint being edited is admitted without waiting).: another team's ID is answered like a missing
 * one. Soft-deleted rows count as missing when the entity has `deletedAt`.
 */
export async function lockOwned<T extends ObjectLiteral>(
  tx: EntityManager,
  entity: EntityTarget<T>,
  teamId: string,
  id: string,
  what: string,
  options: { softDeleted?: boolean } = {},
): Promise<T> {
  const qb = tx
    .getRepository(entity)
    .createQueryBuilder('row')
    .setLock('for_no_key_update')
    .where('row.id = :id AND row.team_id = :teamId', { id, teamId });
  if (options.softDeleted) qb.andWhere('row.deleted_at IS NULL');
  const row = await qb.getOne();
  if (!row) throw notFound(what);
  return row;
}

/** Postgres codes for a transaction that lost a deadlock or a serialization race and may simply run again. */
const RETRYABLE_CODES = new Set(['40P01', '40001']);

export function isRetryableConflict(error: unknown): boolean {
  const code =
    (error as { code?: unknown })?.code ?? (error as { driverError?: { code?: unknown } })?.driverError?.code;
  return typeof code === 'string' && RETRYABLE_CODES.has(code);
}

/**
 * Runs a whole transaction again when Postgres aborted it as a deadlock victim (or a serialization failure):
 * everything it did was rolled back, so running it again is safe. Lock order is kept consistent on the hot paths;
 * this covers the rare cycles across them.
 */
export async function retryOnConflict<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= attempts || !isRetryableConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 10));
    }
  }
}

/**
 * Rows of any statement. TypeORM answers UPDATE and DELETE with `[rows, count]` and everything else with the rows;
 * statements with RETURNING use this so they read the same whatever their command.
 */
export async function queryRows<T>(
  runner: { query(sql: string, parameters?: unknown[]): Promise<unknown> },
  sql: string,
  parameters: unknown[],
): Promise<T[]> {
  const result = await runner.query(sql, parameters);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number')
    return result[0] as T[];
  return result as T[];
}

/** Binds a value as the next placeholder of a statement being built and answers the placeholder (`$n`). */
export type Bind = (value: unknown) => string;

/**
 * The parameters of one statement built from parts (the CTEs of a batch come from several modules): each part binds
 * its values with `bind` and writes the placeholder it answers.
 */
export function statementParameters(): { bind: Bind; parameters: unknown[] } {
  const parameters: unknown[] = [];
  return {
    parameters,
    bind: (value) => {
      parameters.push(value);
      return `$${parameters.length}`;
    },
  };
}

/** Byte strings bound as one binary parameter, and where each one is in it (bindPackedBytes). */
export interface PackedBytes {
  /** An `int[]` expression to unnest beside the rows: each value's offset in the packed parameter (NULL: NULL). */
  offsets: string;
  /** An `int[]` expression to unnest beside the rows: each value's length (NULL: the value is NULL). */
  lengths: string;
  /** The `bytea` of one row, from its unnested offset and length columns. */
  value(offset: string, length: string): string;
}

/**
 * Binds byte strings (message bodies) as one `bytea` parameter, which node-postgres sends in binary, with their
 * offsets and lengths. A `bytea[]` of Buffers is sent as the text of an array literal, each element hex: twice the
 * bytes on the wire, hex-encoded in Node and decoded again by Postgres, for every body of every batch. Here the
 * bodies are copied once, into the packed parameter, and each row takes its slice.
 */
export function bindPackedBytes(bind: Bind, values: readonly (Buffer | null)[]): PackedBytes {
  const offsets: (number | null)[] = [];
  const lengths: (number | null)[] = [];
  const present: Buffer[] = [];
  let at = 0;
  for (const value of values) {
    offsets.push(value === null ? null : at);
    lengths.push(value === null ? null : value.length);
    if (value === null) continue;
    present.push(value);
    at += value.length;
  }
  const packed = bind(Buffer.concat(present, at));
  return {
    offsets: `${bind(offsets)}::int[]`,
    lengths: `${bind(lengths)}::int[]`,
    value: (offset, length) =>
      `CASE WHEN ${length} IS NULL THEN NULL ELSE substring(${packed}::bytea FROM ${offset} + 1 FOR ${length}) END`,
  };
}

/** The node-postgres client under a TypeORM query runner, as far as prepared statements need it. */
interface PreparingClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * Runs a prepared statement (`hotStatement` or `preparedStatement`, @svc/db) on the caller's transaction's
 * connection, so each connection parses and plans it once instead of on every call: for the hot paths' large
 * statements, whose planning costs about as much as their execution. HotSql runs the same statements on their own
 * pool; admission and a settlement with events need theirs inside a transaction.
 */
export async function queryPrepared<T>(
  tx: EntityManager,
  statement: HotStatement | string,
  values: readonly unknown[],
): Promise<T[]> {
  const runner = tx.queryRunner as unknown as { connect(): Promise<PreparingClient> } | undefined;
  if (!runner) throw new Error('queryPrepared runs in a transaction');
  const { name, text } = typeof statement === 'string' ? preparedStatement(statement) : statement;
  const client = await runner.connect();
  const result = await client.query({ name, text, values: [...values] });
  return result.rows as T[];
}
