/**
 * Pending deliveries the delivery benchmark (scripts/bench-delivery.ts) writes with SQL rather than through the API,
 * because the API would take minutes to admit them: the backlog of scenario (d), and the queue of the dead endpoint
 * of scenario (e). The rows are what admission stores (message, content, delivery, queue row, counters).
 */
import pg from 'pg';
import { RATE_VERSION } from '@svc/core';
import type { BenchTeam } from './bench-delivery-env.js';

/** One statement's worth: `messages` messages of `team`, each with one delivery per endpoint, due after `dueIn`. */
interface PendingBatch {
  /**
   * Makes the IDs unique (one number per batch of a database). IDs are made as the service makes them: the time now,
   * then (in place of the random part) the series, the message's number and the endpoint's ordinal in hex, so they
   * sort by time and land in today's partition (migration 0041), not in the DEFAULT one. Below 65,536.
   */
  series: number;
  team: Pick<BenchTeam, 'teamId' | 'tenantId'>;
  endpointIds: string[];
  messages: number;
  /** A Postgres interval: '6 days' for a backlog that stays pending, '0 seconds' for deliveries due now. */
  dueIn: string;
}

/** Inserts one batch and moves the endpoints' and the team's pending counters; answers the deliveries inserted. */
async function insertPendingDeliveries(client: pg.Client, batch: PendingBatch): Promise<number> {
  const { series, team, endpointIds, messages, dueIn } = batch;
  const key = (await client.query<{ id: string }>('SELECT id FROM api_keys WHERE team_id = $1 LIMIT 1', [team.teamId]))
    .rows[0]!.id;
  await client.query(
    `WITH m AS (
       INSERT INTO messages (id, team_id, tenant_id, event_type, origin, content_type, body_bytes, body_sha256,
                             deliver_at, expires_at, retained_until, paying_key_id, ingest_units, delivery_units,
                             price_micros, rate_version, created_at)
       SELECT left(id_time_bound('wdm_', now()), 14) || lpad(to_hex($1::int), 6, '0') || lpad(to_hex(g), 10, '0'),
              $2, $3, 'bench.event', 'api', 'application/json', 64, 'bench',
              now() + $9::interval, now() + $9::interval + interval '70 hours', now() + interval '30 days', $4, 1,
              $6::int, 0, $7, now()
         FROM generate_series(1, $5::int) g
       RETURNING id, deliver_at, expires_at),
     c AS (INSERT INTO message_contents (message_id, team_id, body)
           SELECT id, $2, convert_to('{"backlog":true,"padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}', 'UTF8') FROM m),
     d AS (
       INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, next_attempt_at,
                               expires_at, body_bytes, content_type, delivery_units, created_at, updated_at)
       SELECT left(id_time_bound('wdd_', now()), 14) || substr(m.id, 17, 4) || substr(m.id, 23, 8) || lpad(to_hex(e.ord), 4, '0'), $2, $3, m.id, e.id, 'bench.event', 'queued',
              m.deliver_at, m.expires_at, 64, 'application/json', 1, now(), now()
         FROM m CROSS JOIN unnest($8::text[]) WITH ORDINALITY AS e(id, ord)
       RETURNING id, endpoint_id, next_attempt_at, expires_at)
     INSERT INTO delivery_queue (delivery_id, endpoint_id, due_at, expires_at)
     SELECT d.id, d.endpoint_id, d.next_attempt_at, d.expires_at FROM d`,
    [series, team.teamId, team.tenantId, key, messages, endpointIds.length, RATE_VERSION, endpointIds, dueIn],
  );
  // The counters admission keeps (shard 0 of each; readers sum the shards), so that cancelling or finishing these
  // deliveries later leaves them right.
  await client.query(
    `WITH e AS (
       INSERT INTO endpoint_queue_counts AS q (endpoint_id, shard, pending)
       SELECT id, 0, $2::bigint FROM unnest($1::text[]) AS id ORDER BY id
       ON CONFLICT (endpoint_id, shard) DO UPDATE SET pending = q.pending + EXCLUDED.pending)
     INSERT INTO team_queue_counts AS t (team_id, shard, pending) VALUES ($3, 0, $2::bigint * cardinality($1::text[]))
     ON CONFLICT (team_id, shard) DO UPDATE SET pending = t.pending + EXCLUDED.pending`,
    [endpointIds, messages, team.teamId],
  );
  return messages * endpointIds.length;
}

/**
 * (d): pending deliveries scheduled days ahead, inserted in batches (10,000 messages, each with one delivery per
 * endpoint of a backlog team). Stops early at `budgetMs` and answers how many it inserted.
 */
export async function insertBacklog(
  databaseUrl: string,
  teams: BenchTeam[],
  size: number,
  budgetMs: number,
): Promise<{ inserted: number; seconds: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = Date.now();
  const perBatchMessages = 10_000;
  let inserted = 0;
  try {
    for (let batch = 0; inserted < size && Date.now() - started < budgetMs; batch += 1) {
      const team = teams[batch % teams.length]!;
      const endpointIds = team.endpoints.map((e) => e.id);
      const messages = Math.min(perBatchMessages, Math.ceil((size - inserted) / endpointIds.length));
      inserted += await insertPendingDeliveries(client, {
        series: batch,
        team,
        endpointIds,
        messages,
        dueIn: '6 days',
      });
    }
    // A backlog that has been there a while has been vacuumed and analysed; measure that state, not a fresh bulk load.
    await vacuumDeliveryTables(client);
  } finally {
    await client.end();
  }
  return { inserted, seconds: (Date.now() - started) / 1000 };
}

/**
 * (e): `queued` deliveries due now for one endpoint, whose circuit is open (ten consecutive failures, the next probe
 * a minute away): what an endpoint whose receiver stopped answering looks like once its circuit has opened. One
 * transaction, so its owner never sees the rows with the circuit closed.
 */
export async function queueBehindOpenCircuit(
  databaseUrl: string,
  team: BenchTeam,
  endpointId: string,
  queued: number,
  /** Unique per call in the database, and apart from the backlog's batches (0 up). */
  series: number,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    const opened = await client.query(
      `UPDATE endpoint_health
          SET circuit = 'open', consecutive_failures = 10, last_failure_at = now(),
              next_probe_at = now() + interval '1 minute', probe_wait_seconds = 60
        WHERE endpoint_id = $1`,
      [endpointId],
    );
    if (opened.rowCount !== 1) throw new Error(`endpoint_health has no row for ${endpointId}`);
    await insertPendingDeliveries(client, {
      series,
      team,
      endpointIds: [endpointId],
      messages: queued,
      dueIn: '0 seconds',
    });
    await client.query('COMMIT');
    // A queue that has waited a while has been vacuumed and analysed, and no autovacuum of the bulk insert falls
    // into the measurement.
    await vacuumDeliveryTables(client);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/** VACUUM ANALYZE of the tables a delivery writes: after a bulk change, before the next measurement. */
export async function vacuumDeliveryTables(connection: pg.Client | string): Promise<void> {
  const own = typeof connection === 'string';
  const client = own ? new pg.Client({ connectionString: connection }) : connection;
  if (own) await client.connect();
  try {
    for (const table of ['messages', 'message_contents', 'deliveries', 'delivery_queue'])
      await client.query(`VACUUM ANALYZE ${table}`);
  } finally {
    if (own) await client.end();
  }
}
