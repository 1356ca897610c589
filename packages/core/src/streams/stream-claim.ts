import {
  pgPoolOf,
  sqlLiteral,
  transactionInOneRoundTrip,
  type HotStatement,
  type RoundTripClient,
  type RoundTripPart,
} from '@svc/db';
import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import { sortClaimedRows } from '../deliveries/claimed-rows.js';
import type { AttemptTrigger } from '../deliveries/delivery-policy.js';
import { finishDeliveries, dropStaleRows, type EngineEventSink } from '../deliveries/delivery-records.js';
import type { EndpointCredentialsService } from '../endpoints/endpoint-credentials.service.js';
import type { ClaimedAttempt } from '../engine/dispatch.service.js';
import { streamAttempt } from './stream-attempt.js';
import { rememberLease } from './stream-leases.js';

/**
 * A stream connection's claim of its endpoint's due rows (docs/streams.md), the push claim's rules for one endpoint
 * without partitions or slots: the endpoint must be enabled; its unacknowledged deliveries (every connection's live
 * leases) stay within max_concurrency; an ordered endpoint offers only its head; an open circuit offers nothing until
 * its probe time, then one probe (half-opened here, as the push claim does). Rows are leased to the connection
 * (lease_owner = its wdc_ ID) for the endpoint's timeout_seconds, the visibility timeout. Only rows nobody holds are
 * taken: a lapsed stream lease is a `timeout` attempt first (stream-settle.ts), never silently offered again.
 */
const STREAM_CLAIM_SQL = `
WITH lane AS (
  SELECT e.id AS endpoint_id, e.team_id, e.status, e.deleted_at IS NOT NULL AS deleted, e.max_concurrency,
         e.ordering = 'ordered' AS ordered, e.timeout_seconds, e.url_revision, e.retry_delays_seconds, e.headers_sealed,
         e.version AS endpoint_version,
         h.circuit, h.next_probe_at,
         (SELECT count(*) FROM delivery_queue f
           WHERE f.endpoint_id = e.id AND f.lease_owner IS NOT NULL AND f.due_at > $4)::int AS in_flight
    FROM endpoints e LEFT JOIN endpoint_health h ON h.endpoint_id = e.id
   WHERE e.id = $1 AND e.delivery_mode = 'stream'
), quota AS (
  SELECT l.*, coalesce(l.circuit, 'closed') <> 'closed' AS probing,
         CASE WHEN l.deleted OR l.status <> 'enabled' THEN 0
              WHEN coalesce(l.circuit, 'closed') <> 'closed'
                THEN CASE WHEN (l.next_probe_at IS NULL OR l.next_probe_at <= $4) AND l.in_flight = 0
                          THEN least($2::int, 1) ELSE 0 END
              WHEN l.ordered THEN greatest(0, least($2::int, 1 - l.in_flight))
              ELSE greatest(0, least($2::int, l.max_concurrency - l.in_flight)) END AS take
    FROM lane l
), head AS (
  SELECT h.delivery_id
    FROM quota, LATERAL (
      SELECT q.delivery_id FROM delivery_queue q
       WHERE q.endpoint_id = quota.endpoint_id AND q.sequence IS NOT NULL ORDER BY q.sequence LIMIT 1) h
   WHERE quota.ordered
), picked AS (
  SELECT p.delivery_id
    FROM quota, LATERAL (
      SELECT q.delivery_id FROM delivery_queue q
       WHERE q.endpoint_id = quota.endpoint_id AND q.due_at <= $4 AND q.lease_owner IS NULL
       ORDER BY q.due_at, q.delivery_id LIMIT quota.take FOR UPDATE SKIP LOCKED) p
   WHERE quota.take > 0 AND NOT quota.ordered
  UNION ALL
  SELECT p.delivery_id
    FROM quota JOIN head ON true, LATERAL (
      SELECT q.delivery_id FROM delivery_queue q
       WHERE q.delivery_id = head.delivery_id AND q.due_at <= $4 AND q.lease_owner IS NULL FOR UPDATE SKIP LOCKED) p
   WHERE quota.take > 0
), leased AS (
  UPDATE delivery_queue q
     SET lease_owner = $3, attempt = q.attempt + 1,
         due_at = $4::timestamptz + make_interval(secs => (SELECT timeout_seconds FROM quota)::float8)
   WHERE q.delivery_id = ANY (ARRAY(SELECT delivery_id FROM picked))
  RETURNING q.delivery_id, q.attempt, q.due_at
), probe AS (
  UPDATE endpoint_health h SET circuit = 'half_open', next_probe_at = l.due_at
    FROM leased l, quota WHERE quota.probing AND h.endpoint_id = quota.endpoint_id
  RETURNING h.endpoint_id
)
SELECT quota.endpoint_id, quota.team_id, quota.status, quota.deleted, quota.timeout_seconds, quota.url_revision,
       quota.endpoint_version,
       quota.retry_delays_seconds, quota.headers_sealed, quota.probing,
       -- When to look again without a wake-up: the first free row not taken now, and the first lease that ends
       -- (its timeout is settled then).
       (SELECT min(q.due_at) FROM delivery_queue q
         WHERE q.endpoint_id = quota.endpoint_id AND q.lease_owner IS NULL
           AND q.delivery_id <> ALL (ARRAY(SELECT delivery_id FROM picked))) AS next_due_at,
       (SELECT min(q.due_at) FROM delivery_queue q
         WHERE q.endpoint_id = quota.endpoint_id AND q.lease_owner IS NOT NULL) AS next_lease_end,
       s.secret_versions, s.secrets_sealed,
       l.delivery_id AS leased_id, l.attempt AS leased_attempt, l.due_at AS lease_until,
       d.id, d.tenant_id, d.message_id, d.event_type, d.attempt_count, d.next_trigger, d.cancel_retries,
       d.expires_at, d.content_type, d.last_status_code, d.sequence,
       CASE WHEN d.id IS NOT NULL AND NOT d.cancel_retries AND d.expires_at > $4 AND NOT quota.deleted
            THEN coalesce(d.body, (SELECT c.body FROM message_contents c WHERE c.message_id = d.message_id)) END AS body,
       msg.created_at AS message_created_at, msg.deliver_at, msg.traceparent
  FROM quota
  LEFT JOIN leased l ON true
  LEFT JOIN deliveries d ON d.id = l.delivery_id AND d.status IN ('queued', 'retry_wait', 'in_flight')
  LEFT JOIN messages msg ON msg.id = d.message_id
  LEFT JOIN LATERAL (
    SELECT array_agg(es.secret_version ORDER BY es.secret_version DESC) AS secret_versions,
           array_agg(es.secret_sealed ORDER BY es.secret_version DESC) AS secrets_sealed
      FROM endpoint_secrets es
     WHERE es.endpoint_id = quota.endpoint_id AND (es.expires_at IS NULL OR es.expires_at > $4)
       AND EXISTS (SELECT 1 FROM leased)) s ON true
 ORDER BY d.sequence NULLS LAST, l.due_at, d.id`;

interface StreamClaimRow {
  endpoint_id: string;
  team_id: string;
  status: 'enabled' | 'paused' | 'disabled';
  deleted: boolean;
  timeout_seconds: number;
  url_revision: string;
  endpoint_version: string;
  retry_delays_seconds: number[];
  headers_sealed: Buffer | null;
  probing: boolean;
  next_due_at: Date | null;
  next_lease_end: Date | null;
  secret_versions: number[] | null;
  secrets_sealed: Buffer[] | null;
  leased_id: string | null;
  leased_attempt: number | null;
  lease_until: Date | null;
  id: string | null;
  tenant_id: string;
  message_id: string;
  event_type: string;
  attempt_count: number;
  next_trigger: AttemptTrigger;
  cancel_retries: boolean;
  expires_at: Date;
  content_type: string;
  last_status_code: number | null;
  sequence: string | null;
  body: Buffer | null;
  message_created_at: Date;
  deliver_at: Date;
  traceparent: string | null;
}

export interface StreamClaim {
  /** The leased attempts, in the endpoint's order (sequence, then due time). */
  attempts: ClaimedAttempt[];
  /** false: the endpoint is gone, disabled or no longer a stream endpoint; the stream ends. */
  open: boolean;
  /** The earliest time something may become claimable without a wake-up (a due row, a lease to time out). */
  recheckAt: Date | null;
  /** When the first lease of the endpoint ends (its timeout is to be settled then); null: none is held. */
  leaseEndsAt: Date | null;
}

/**
 * The wake-up a settlement sends the endpoint's streams in other processes, from its claim's transaction: only when
 * the endpoint has a connection that is not one of `local` (this process's, which it pumps itself). A connection
 * opened meanwhile needs none: its first claim comes after it is registered and waits for this transaction's lock.
 */
export interface StreamWakeAlong {
  channel: string;
  payload: string;
  local: readonly string[];
}

function wakeStatement(wake: StreamWakeAlong, endpointId: string, literal: (value: unknown) => string): string {
  return `SELECT pg_notify(${literal(wake.channel)}, ${literal(wake.payload)})
   WHERE EXISTS (SELECT 1 FROM stream_connections c
                  WHERE c.endpoint_id = ${literal(endpointId)} AND c.id <> ALL (${literal(wake.local)}::text[]))`;
}

/** A settlement statement sent in the claim's transaction, before the claim (acknowledgements, stream-settle.ts). */
export interface SettleAlong {
  statement: HotStatement;
  params: unknown[];
  /**
   * A statement run first, under the lock, that fails the whole transaction when what the settlement was decided on
   * no longer holds (stream-settle.ts: acknowledgements of leases this process knows).
   */
  check?: (literal: (value: unknown) => string) => string;
}

/**
 * Claims up to `want` deliveries of `endpointId` for stream connection `connectionId`. Claims of one endpoint take
 * turns (an advisory lock for the claim's transaction), so the in-flight count each reads includes the leases of
 * every other connection's claim before it: max_concurrency holds across connections and processes.
 */
export async function claimForStream(
  deps: { db: DataSource; clock: Clock; credentials: EndpointCredentialsService; events: EngineEventSink },
  connectionId: string,
  endpointId: string,
  want: number,
): Promise<StreamClaim> {
  const now = deps.clock.now();
  const { claimRows } = await claimInOneRoundTrip(deps.db, { endpointId, want, connectionId, now });
  return finishClaim(deps, connectionId, claimRows, now);
}

/**
 * Settles acknowledgements and claims for `connectionId` in one transaction and one round trip (the endpoint's claim
 * lock, the settlement statement, the claim, the wake-up of the endpoint's streams in other processes): the claim's
 * count of leases in flight sees the settlement, so the room it freed is taken at once, and max_concurrency holds as
 * for any claim. Answers the settlement's rows and the claim; nothing is written when it throws.
 */
export async function settleAndClaimForStream(
  deps: { db: DataSource; clock: Clock; credentials: EndpointCredentialsService; events: EngineEventSink },
  claim: { connectionId: string; endpointId: string; want: number },
  settle: SettleAlong,
  notify: StreamWakeAlong,
): Promise<{ settleRows: unknown[]; claim: () => Promise<StreamClaim> }> {
  const now = deps.clock.now();
  const { settleRows, claimRows } = await claimInOneRoundTrip(deps.db, { ...claim, now }, settle, notify);
  // The claim's own follow-ups (finished or unopened rows, rare) run once the settlement's caller has its answer.
  return { settleRows, claim: () => finishClaim(deps, claim.connectionId, claimRows, now) };
}

async function finishClaim(
  deps: { db: DataSource; clock: Clock; credentials: EndpointCredentialsService; events: EngineEventSink },
  connectionId: string,
  rows: readonly StreamClaimRow[],
  now: Date,
): Promise<StreamClaim> {
  const first = rows[0];
  if (!first) return { attempts: [], open: false, recheckAt: null, leaseEndsAt: null };
  // Shared with the push claim (deliveries/claimed-rows.ts): attempted, finished instead, stale or given back.
  const { attempts, finished, stale, sealedElsewhere } = sortClaimedRows(
    rows,
    now,
    (row) => row.leased_attempt!,
    (row) => {
      const attempt = toAttempt(deps, row, now);
      rememberLease(connectionId, row, row.leased_attempt!, row.lease_until!);
      return attempt;
    },
  );
  const unopened = sealedElsewhere.map(({ row }) => ({ id: row.id!, fence: row.leased_attempt! }));
  if (finished.length > 0) await finishDeliveries(deps.db, connectionId, finished, now, deps.events);
  if (stale.length > 0) await dropStaleRows(deps.db, connectionId, stale);
  if (unopened.length > 0) await releaseUnsent(deps.db, connectionId, unopened, now);
  const times = [first.next_due_at, first.next_lease_end].filter((t): t is Date => t !== null);
  return {
    attempts,
    open: !first.deleted && first.status !== 'disabled',
    recheckAt: times.length === 0 ? null : new Date(Math.min(...times.map((t) => t.getTime()))),
    leaseEndsAt: first.next_lease_end,
  };
}

/** The claim, prepared once per connection (the claim's transaction is one simple-protocol message). */
const STREAM_CLAIM = { name: 'svc_stream_claim_v2', text: STREAM_CLAIM_SQL };

/**
 * The hot pool's planner settings (packages/db hot-sql.ts), for this transaction only: the prepared statements are
 * planned once, generically, as the hot pool plans the engine's.
 */
const HOT_PLANNING = [
  'SET LOCAL plan_cache_mode = force_generic_plan',
  'SET LOCAL enable_seqscan = off',
  'SET LOCAL enable_bitmapscan = off',
];

/**
 * The claim's transaction (the endpoint's advisory lock, then, with an acknowledgement, the settlement, then the
 * claim statement, which takes its snapshot after both so it counts every lease committed before it and frees what
 * the settlement settled) in one round trip instead of four or more (BEGIN, lock, settle, claim, COMMIT), which is
 * most of what a stream's delivery cycle waits for (`transactionInOneRoundTrip`, @svc/db).
 */
async function claimInOneRoundTrip(
  db: DataSource,
  claim: { endpointId: string; want: number; connectionId: string; now: Date },
  settle?: SettleAlong,
  notify?: StreamWakeAlong,
): Promise<{ settleRows: unknown[]; claimRows: StreamClaimRow[] }> {
  const client: RoundTripClient = await pgPoolOf(db).connect();
  const literal = (value: unknown) => sqlLiteral(client, value);
  const lock = `SELECT pg_advisory_xact_lock(hashtextextended('stream-claim:' || ${literal(claim.endpointId)}, 0))`;
  const parts: RoundTripPart[] = [
    ...HOT_PLANNING,
    lock,
    ...(settle?.check ? [settle.check(literal)] : []),
    ...(settle ? [{ statement: settle.statement, values: settle.params }] : []),
    {
      statement: STREAM_CLAIM,
      values: [claim.endpointId, claim.want, claim.connectionId, claim.now],
      types: 'text, int, text, timestamptz',
    },
    ...(notify ? [wakeStatement(notify, claim.endpointId, literal)] : []),
  ];
  const rows = await transactionInOneRoundTrip(client, parts);
  // The three SETs, the lock, [the check], [the settlement], the claim.
  const at = HOT_PLANNING.length + 1 + (settle?.check ? 1 : 0);
  return {
    settleRows: settle ? rows[at]! : [],
    claimRows: rows[settle ? at + 1 : at]! as StreamClaimRow[],
  };
}

/** How long a delivery whose secrets this process cannot open waits before any connection is offered it again. */
const UNSENT_RETRY_MS = 30_000;

/** Leases given back unsent (the attempt number too): the delivery waits for a process with the right key. */
async function releaseUnsent(
  db: DataSource,
  connectionId: string,
  rows: readonly { id: string; fence: number }[],
  now: Date,
): Promise<void> {
  await db.query(
    `UPDATE delivery_queue q SET lease_owner = NULL, attempt = q.attempt - 1, due_at = $4
       FROM unnest($1::text[], $2::int[]) AS x(id, fence)
      WHERE q.delivery_id = x.id AND q.lease_owner = $3 AND q.attempt = x.fence`,
    [rows.map((r) => r.id), rows.map((r) => r.fence), connectionId, new Date(now.getTime() + UNSENT_RETRY_MS)],
  );
}

function toAttempt(
  deps: { clock: Clock; credentials: EndpointCredentialsService },
  row: StreamClaimRow,
  now: Date,
): ClaimedAttempt {
  const { credentials } = deps;
  return streamAttempt(
    deps.clock,
    row,
    { attemptNumber: row.leased_attempt!, probing: row.probing, startedAt: now },
    {
      body: row.body!,
      headers: credentials.openHeaders({ id: row.endpoint_id, headersSealed: row.headers_sealed }),
      signingSecrets: (row.secret_versions ?? []).map((version, i) =>
        credentials.secrets.open(row.endpoint_id, version, row.secrets_sealed![i]!),
      ),
      dueSince: row.message_created_at > row.deliver_at ? row.message_created_at : row.deliver_at,
      traceparent: row.traceparent,
    },
  );
}
