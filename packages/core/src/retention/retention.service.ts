import type { DataSource, EntityManager } from 'typeorm';
import { DAY, HOUR, type Clock } from '../common/clock.js';
import { eraseContent } from '../deliveries/delivery-records.js';

/** Messages, their deliveries and attempts are kept this long after acceptance. */
export const RECORD_RETENTION_DAYS = 30;
/**
 * Console and portal sessions are kept this long after they expire, for the session lists (`session list`, a
 * tenant's portal sessions); a revoked session goes at the same time, at most 7 days (a portal session's longest
 * life) later than 30 days after its revocation.
 */
export const SESSION_RETENTION_DAYS = 30;

export interface SweepOptions {
  /** Rows per transaction: each batch is its own short transaction. */
  batchSize?: number;
  /** Stop starting new batches after this long; the next scheduled run continues. */
  budgetMs?: number;
}

export interface SweepReport {
  contentErased: number;
  redactionsCompleted: number;
  responseBodiesErased: number;
  messagesDeleted: number;
  sourceEventIdsPurged: number;
  /** Console and portal sessions that expired more than SESSION_RETENTION_DAYS ago. */
  sessionsDeleted: number;
  /** False when the time budget ran out with work left. */
  finished: boolean;
}

/** No delivery of the message may still be attempted (its body must stay until then). */
const NO_PENDING = `NOT EXISTS (SELECT 1 FROM deliveries d
                     WHERE d.message_id = m.id AND d.status IN ('queued', 'in_flight', 'retry_wait'))`;

/**
 * Retention sweeps, run by the maintenance job in small batches, each its own transaction (docs/retention.md):
 * 1. message content past its effective retained_until, once no delivery of the message can still be attempted;
 * 2. redactions completed once no snapshot can still see the erased bytes and a VACUUM has removed them;
 * 3. response bodies past response_retention_days;
 * 4. messages, with their deliveries and attempts, 30 days after acceptance;
 * 5. source event IDs past their keep (35 days for provider IDs, 24 hours for body hashes);
 * 6. console and portal sessions 30 days after they expired.
 */
export class RetentionService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  async sweep(options: SweepOptions = {}): Promise<SweepReport> {
    const batch = options.batchSize ?? 200;
    const deadline = Date.now() + (options.budgetMs ?? 240_000);
    const report: SweepReport = {
      contentErased: 0,
      redactionsCompleted: 0,
      responseBodiesErased: 0,
      messagesDeleted: 0,
      sourceEventIdsPurged: 0,
      sessionsDeleted: 0,
      finished: false,
    };
    const drain = async (step: () => Promise<number>, add: (n: number) => void): Promise<boolean> => {
      for (;;) {
        if (Date.now() > deadline) return false;
        const n = await step();
        add(n);
        if (n < batch) return true;
      }
    };
    report.finished =
      (await drain(
        () => this.eraseExpiredContent(batch),
        (n) => (report.contentErased += n),
      )) &&
      (await drain(
        () => this.eraseExpiredResponses(batch),
        (n) => (report.responseBodiesErased += n),
      )) &&
      (await drain(
        () => this.deleteOldMessages(batch),
        (n) => (report.messagesDeleted += n),
      )) &&
      (await drain(
        () => this.purgeSourceEventIds(batch),
        (n) => (report.sourceEventIdsPurged += n),
      )) &&
      (await drain(
        () => this.deleteEndedSessions(batch),
        (n) => (report.sessionsDeleted += n),
      ));
    report.redactionsCompleted = await this.completeRedactions();
    return report;
  }

  /**
   * One batch of messages whose content is past its effective retention (the stored retained_until, shortened by
   * the team's current payload_retention_days, or their tenant deleted) and none of whose deliveries may still be
   * attempted.
   */
  async eraseExpiredContent(batchSize: number): Promise<number> {
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const rows: { id: string }[] = await tx.query(
        `SELECT id FROM (
           SELECT m.id FROM messages m
            WHERE m.content_erased_at IS NULL AND m.retained_until <= $1 AND ${NO_PENDING}
            LIMIT $2) due
         UNION
         SELECT x.id FROM teams t
           JOIN team_settings s ON s.team_id = t.id AND s.payload_retention_days < 30
           CROSS JOIN LATERAL (
             SELECT m.id FROM messages m
              WHERE m.team_id = t.id AND m.content_erased_at IS NULL
                AND m.created_at <= $1::timestamptz - make_interval(days => s.payload_retention_days)
                AND message_retained_until(m.retained_until, m.created_at, m.expires_at, s.payload_retention_days,
                                           NULL) <= $1
                AND ${NO_PENDING}
              ORDER BY m.created_at
              LIMIT $2) x
         UNION
         SELECT x.id FROM tenants t
           CROSS JOIN LATERAL (
             SELECT m.id FROM messages m
              WHERE m.team_id = t.team_id AND m.tenant_id = t.id AND m.content_erased_at IS NULL AND ${NO_PENDING}
              LIMIT $2) x
          WHERE t.status = 'deleted' AND t.content_erased_at IS NULL
         LIMIT $2`,
        [now, batchSize],
      );
      await eraseContent(
        tx,
        rows.map((r) => r.id),
        now,
      );
      if (rows.length < batchSize) await this.markDeletedTenantsErased(tx, now);
      return rows.length;
    });
  }

  /** Deleted tenants none of whose messages hold content any more: later sweeps skip them. */
  private async markDeletedTenantsErased(tx: EntityManager, now: Date): Promise<void> {
    await tx.query(
      `UPDATE tenants t SET content_erased_at = $1
        WHERE t.status = 'deleted' AND t.content_erased_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM messages m
                           WHERE m.team_id = t.team_id AND m.tenant_id = t.id AND m.content_erased_at IS NULL)`,
      [now],
    );
  }

  /** One batch of kept response bodies past the team's response_retention_days. */
  async eraseExpiredResponses(batchSize: number): Promise<number> {
    const now = this.clock.now();
    const [, count]: [unknown, number] = await this.db.query(
      `UPDATE attempts SET response_body = NULL WHERE id IN (
         SELECT a.id FROM attempts a LEFT JOIN team_settings s ON s.team_id = a.team_id
          WHERE a.response_body IS NOT NULL AND a.created_at <= $1::timestamptz - interval '1 day'
            AND a.created_at <= $1::timestamptz - make_interval(days => coalesce(s.response_retention_days, 7))
          ORDER BY a.created_at
          LIMIT $2)`,
      [now, batchSize],
    );
    return count;
  }

  /**
   * One batch of messages accepted over 30 days ago, whose content is gone and deliveries finished, from the
   * partitions that are not a day's (the legacy partition, the table as it was before migration 0041, and DEFAULT):
   * a day's partitions go whole (PartitionMaintenance.dropExpired).
   */
  async deleteOldMessages(batchSize: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - RECORD_RETENTION_DAYS * DAY);
    const partitions: { name: string }[] = await this.db.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'messages'::regclass AND c.relname !~ '_p[0-9]{8}$' ORDER BY c.relname DESC`,
    );
    let deleted = 0;
    for (const { name } of partitions) {
      if (deleted >= batchSize) break;
      deleted += await this.deleteOldMessagesFrom(`"${name.replace(/"/g, '""')}"`, cutoff, batchSize - deleted);
    }
    return deleted;
  }

  /**
   * One batch of deleteOldMessages from one partition of messages (a quoted name): with their deliveries, attempts
   * and contents. The retention benchmark times it on a day's partition, as the sweep deleted a day before 0041.
   */
  async deleteOldMessagesFrom(partition: string, cutoff: Date, batchSize: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      // Per team, oldest first, on the (team_id, created_at) index.
      const rows: { id: string }[] = await tx.query(
        `SELECT x.id FROM teams t
           CROSS JOIN LATERAL (
             SELECT m.id FROM ${partition} m
              WHERE m.team_id = t.id AND m.created_at <= $1 AND m.content_erased_at IS NOT NULL AND ${NO_PENDING}
              ORDER BY m.created_at
              LIMIT $2
                FOR UPDATE OF m SKIP LOCKED) x
          LIMIT $2`,
        [cutoff, batchSize],
      );
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.id);
      await tx.query(
        `WITH doomed AS (SELECT id FROM deliveries WHERE message_id = ANY($1::text[])),
              a AS (DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM doomed))
         SELECT 1`,
        [ids],
      );
      await tx.query(`DELETE FROM deliveries WHERE message_id = ANY($1::text[])`, [ids]);
      await tx.query(`DELETE FROM message_contents WHERE message_id = ANY($1::text[])`, [ids]);
      await tx.query(`DELETE FROM messages WHERE id = ANY($1::text[])`, [ids]);
      return ids.length;
    });
  }

  /** One batch of source event IDs past their keep (35 days for provider IDs, 24 hours for body hashes). */
  async purgeSourceEventIds(batchSize: number): Promise<number> {
    const [, count]: [unknown, number] = await this.db.query(
      `DELETE FROM source_event_ids WHERE (source_id, event_key) IN (
         SELECT source_id, event_key FROM source_event_ids WHERE expires_at <= $1 LIMIT $2)`,
      [this.clock.now(), batchSize],
    );
    return count;
  }

  /**
   * One batch of console sessions, then portal sessions, that expired more than SESSION_RETENTION_DAYS ago (through
   * their expires_at indexes). Nothing refers to a session row: a portal session's changes are operational events
   * that carry its ID as text. A portal session's rate-limit buckets (keyed by its ID) go with it.
   */
  async deleteEndedSessions(batchSize: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - SESSION_RETENTION_DAYS * DAY);
    let deleted = 0;
    for (const table of ['console_sessions', 'portal_sessions'] as const) {
      const rows: { n: number }[] = await this.db.query(
        `WITH gone AS (
           DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE expires_at <= $1 LIMIT $2) RETURNING id),
         buckets AS (
           DELETE FROM rate_limit_buckets WHERE $3 AND team_id IN (SELECT id FROM gone))
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, batchSize - deleted, table === 'portal_sessions'],
      );
      deleted += rows[0]?.n ?? 0;
      if (deleted >= batchSize) break;
    }
    return deleted;
  }

  /**
   * Redactions whose erasing transaction committed before every snapshot still open was taken (so no reader can
   * see the old row versions: pg_stat_activity's backend_xmin covers read-only snapshots, which the running
   * transaction IDs of pg_current_snapshot do not), once a VACUUM that started after that moment has processed each
   * table that held the bytes (and its TOAST table): then `complete`. Snapshots in other databases of the cluster
   * cannot see these rows and do not hold back VACUUM here; backends of no database (WAL senders with
   * hot_standby_feedback) do, and count.
   *
   * Proof without vacuuming whole tables every run: the first run that finds a redaction provable notes each
   * table's count of completed vacuums (manual and autovacuum, pg_stat_all_tables) in the message. Vacuums of one
   * table never overlap, so two more completions mean one started after the note and saw no snapshot that could
   * keep the old versions. Busy tables get there through autovacuum alone; a redaction still waiting
   * REDACTION_VACUUM_AFTER_MS after its note gets one VACUUM of the three tables, which then proves every redaction
   * provable at its start. It skips index cleanup: the erased bytes are in the heap and TOAST tuples, which it
   * prunes; index entries hold keys only, and autovacuum cleans them up later.
   */
  async completeRedactions(): Promise<number> {
    const candidates: { id: string; baseline: VacuumBaseline | null }[] = await this.db.query(
      `SELECT m.id, m.redaction_vacuum_baseline AS baseline FROM messages m
        WHERE m.redaction_status = 'redacting'
          AND m.erase_txid < pg_snapshot_xmin(pg_current_snapshot())
          AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                           WHERE a.backend_xmin IS NOT NULL AND a.pid <> pg_backend_pid()
                             AND (a.datid IS NULL OR a.datname = current_database())
                             AND age(a.backend_xmin) >= age(xid(m.erase_txid)))
          -- A replication slot's xmin (a standby's feedback) holds back what VACUUM may remove, like a snapshot.
          AND NOT EXISTS (SELECT 1 FROM pg_replication_slots r
                           WHERE r.xmin IS NOT NULL AND age(r.xmin) >= age(xid(m.erase_txid)))
        LIMIT 1000`,
    );
    if (candidates.length === 0) return 0;
    const now = this.clock.now();
    const counts = await this.vacuumCounts();
    const proven: string[] = [];
    const noted: string[] = [];
    let overdue = false;
    for (const { id, baseline } of candidates) {
      const relations = baseline ? Object.entries(baseline.counts) : [];
      // No note yet, or the statistics were reset since (counts went down): note now.
      if (!baseline || relations.some(([relation, n]) => (counts[relation] ?? 0) < n)) noted.push(id);
      else if (relations.every(([relation, n]) => (counts[relation] ?? 0) >= n + 2)) proven.push(id);
      else if (now.getTime() - new Date(baseline.at).getTime() >= REDACTION_VACUUM_AFTER_MS) overdue = true;
    }
    if (overdue) {
      await this.vacuumRedactedTables();
      // It started after every candidate became provable: it removed the old versions of all of them.
      proven.splice(0, proven.length, ...candidates.map((c) => c.id));
    } else if (noted.length > 0) {
      const baseline: VacuumBaseline = { at: now.toISOString(), counts };
      await this.db.query(
        `UPDATE messages SET redaction_vacuum_baseline = $2::jsonb
          WHERE id = ANY($1::text[]) AND redaction_status = 'redacting'`,
        [noted, JSON.stringify(baseline)],
      );
    }
    if (proven.length === 0) return 0;
    const [, count]: [unknown, number] = await this.db.query(
      `UPDATE messages SET redaction_status = 'complete', redaction_vacuum_baseline = NULL
        WHERE id = ANY($1::text[]) AND redaction_status = 'redacting'`,
      [proven],
    );
    return count;
  }

  /**
   * Completed vacuums (manual and autovacuum) of each table a redaction rewrites, and of its TOAST table: of each
   * partition (leaf) of them, since vacuums are counted per partition (a partitioned parent counts none).
   */
  private async vacuumCounts(): Promise<Record<string, number>> {
    const rows: { relation: string; n: string }[] = await this.db.query(
      `SELECT c.relname || x.suffix AS relation, (s.vacuum_count + s.autovacuum_count)::text AS n
         FROM unnest($1::regclass[]) AS t(oid)
         CROSS JOIN LATERAL pg_partition_tree(t.oid) AS p
         JOIN pg_class c ON c.oid = p.relid
         CROSS JOIN LATERAL (VALUES (c.oid, ''), (c.reltoastrelid, '.toast')) AS x(relid, suffix)
         JOIN pg_stat_all_tables s ON s.relid = x.relid
        WHERE p.isleaf`,
      [REDACTED_TABLES],
    );
    return Object.fromEntries(rows.map((r) => [r.relation, Number(r.n)]));
  }

  private async vacuumRedactedTables(): Promise<void> {
    const runner = this.db.createQueryRunner();
    try {
      await runner.connect();
      // VACUUM cannot run in a transaction and may outlast the pool's statement timeout on a large table.
      await runner.query(`SET statement_timeout = 0`);
      await runner.query(`VACUUM (PROCESS_TOAST, INDEX_CLEANUP OFF, TRUNCATE OFF) ${REDACTED_TABLES.join(', ')}`);
      await runner.query(`RESET statement_timeout`);
    } finally {
      await runner.release();
    }
  }
}

/**
 * The tables a redaction rewrites (the message's body_sha256, its content, its deliveries' copies): their old row
 * versions hold what was erased until a VACUUM removes them.
 */
const REDACTED_TABLES = ['messages', 'message_contents', 'deliveries'];

/** A redaction waits at most this long for autovacuum before the sweep runs one VACUUM of the tables itself. */
export const REDACTION_VACUUM_AFTER_MS = HOUR;

/** When a redaction became provable, and the vacuum counts of the tables then. */
interface VacuumBaseline {
  at: string;
  counts: Record<string, number>;
}
