import type { DataSource } from 'typeorm';
import { hotStatement, type HotSql, type HotStatement } from '@svc/db';
import { SECOND, type Clock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import type { EndpointCredentialsService } from '../endpoints/endpoint-credentials.service.js';
import type { AttemptTrigger, EndpointHealthState } from '../deliveries/delivery-policy.js';
import { DISPATCH_PARTITIONS } from './dispatch-partitions.js';
import { DEFAULT_OWNERSHIP } from './dispatch-ownership.service.js';
import {
  dropStaleRows,
  finishDeliveries,
  type EngineEventSink,
  type FinishedDelivery,
} from '../deliveries/delivery-records.js';
import { sortClaimedRows } from '../deliveries/claimed-rows.js';
import { mismatchedDelivery, type SealingKeyMismatches } from './sealing-key-mismatch.js';

/** Everything one attempt needs, read and opened when the attempt starts (current URL and credentials). */
export interface ClaimedAttempt {
  deliveryId: string;
  messageId: string;
  endpointId: string;
  teamId: string;
  tenantId: string;
  eventType: string;
  attemptId: string;
  attemptNumber: number;
  trigger: AttemptTrigger;
  url: string;
  urlRevision: string;
  timeoutMs: number;
  contentType: string;
  body: Buffer;
  headers: Record<string, string>;
  authorization: string | null;
  signingSecrets: string[];
  retryDelaysSeconds: number[];
  expiresAt: Date;
  /** When the message became deliverable (acceptance or deliver_at): accept-to-delivery latency starts here. */
  dueSince: Date;
  startedAt: Date;
  /** The W3C traceparent of the message's admission: each attempt continues its trace. Null: tracing was off. */
  traceparent: string | null;
  /** Its number in an ordered endpoint's order (sent as Svc-Sequence); null: the endpoint does not order. */
  sequence: string | null;
}

/** What the owner of an endpoint asks of one claim: up to `want` attempts; `mine` of its own are running. */
export interface LaneRequest {
  endpointId: string;
  want: number;
  mine: number;
  /**
   * The deployment's slots this lane must leave free (docs/delivery.md, "Fairness"): the reserve for a slow lane,
   * one for a lane of unknown speed, none for a lane known to answer fast.
   */
  headroom?: number;
}

/**
 * The deployment-wide slots as the engine claims them (docs/delivery.md, "Fairness"): `limit` attempts in flight
 * across every worker (service_concurrency). `running` is what this worker has in flight as it asks; `teams` and
 * `starved` tell other workers whether its work waits.
 */
export interface SlotClaim {
  limit: number;
  running: number;
  teams: number;
  starved: boolean;
}

/** What the claim read of the other live workers' slots. */
export interface SlotCapacity {
  othersInUse: number;
  /** Teams with work on other workers whose last claim was short of slots (0: no other worker waits). */
  othersStarvedTeams: number;
}

/** An endpoint as the claim read it: its configuration, its circuit, and when its next row is due. */
export interface LaneState {
  endpointId: string;
  teamId: string;
  /** Attempts the deployment's slots allowed this lane in this claim (before rows were locked). */
  granted: number;
  version: string;
  status: 'enabled' | 'paused' | 'disabled';
  deleted: boolean;
  maxConcurrency: number;
  ratePerSecond: number;
  health: EndpointHealthState;
  /** Attempts of other workers holding this endpoint's rows (a handoff in progress). */
  foreignInFlight: number;
  /** The earliest due_at of the rows this claim left (a lease's end for rows in flight); null: no rows at all. */
  nextDueAt: Date | null;
}

export interface ClaimResult {
  attempts: ClaimedAttempt[];
  lanes: LaneState[];
  /** Deliveries the claim finished instead of attempting (expired, canceled, secrets unreadable). */
  finished: FinishedDelivery[];
  capacity: SlotCapacity;
}

export interface ClaimOptions {
  /** Narrows the claim to these deliveries (tools and tests that attempt one delivery by hand). */
  onlyDeliveryIds?: readonly string[];
  /** The engine's slots; without them (a claim by hand) no slot is taken or counted. */
  slots?: SlotClaim;
}

export interface DispatchServiceDeps {
  db: DataSource;
  hot: HotSql;
  clock: Clock;
  credentials: EndpointCredentialsService;
  events: EngineEventSink;
  /** A worker whose heartbeat is older than this holds no slots (dispatch-ownership.service.ts). */
  deadAfterSeconds?: number;
  /** Deliveries whose secrets are sealed with another key go back unsent (sealing-key-mismatch.ts). */
  keyMismatches: SealingKeyMismatches;
}

/** How long an attempt holds its row beyond the endpoint's timeout before the row is due again. */
export const LEASE_MARGIN_MS = 5 * SECOND;

/**
 * The other live workers' slots from `rows` (dispatch_slots, or the claim's locked copy of it): the attempts they
 * hold and the teams of those whose work waits for slots. `me` and `deadAfter` are placeholders.
 */
function othersSlotsSql(rows: string, me: string, deadAfter: string): string {
  return `
  SELECT coalesce(sum(r.in_use) FILTER (WHERE r.worker_id <> ${me}), 0)::int AS others_in_use,
         coalesce(sum(r.teams) FILTER (WHERE r.worker_id <> ${me} AND r.starved), 0)::int AS others_starved_teams
    FROM ${rows} r JOIN dispatch_workers dw ON dw.id = r.worker_id
   WHERE dw.heartbeat_at > now() - make_interval(secs => ${deadAfter}::float8)`;
}

/** The slot limit of a claim by hand: no deployment limit applies to it. */
const UNLIMITED_SLOTS = 2_147_483_647;

interface ClaimRow {
  others_in_use: number;
  others_starved_teams: number;
  team_id: string;
  granted: number;
  endpoint_id: string;
  version: string;
  status: 'enabled' | 'paused' | 'disabled';
  deleted: boolean;
  max_concurrency: number;
  rate_per_second: number;
  circuit: 'closed' | 'half_open' | 'open' | null;
  consecutive_failures: number | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  next_probe_at: Date | null;
  probe_wait_seconds: number | null;
  /** The health row's version after this claim (bigint as a string); null: no row. */
  health_version: string | null;
  foreign_in_flight: number;
  next_due_at: Date | null;
  probing: boolean;
  url: string;
  url_revision: string;
  timeout_seconds: number;
  retry_delays_seconds: number[];
  headers_sealed: Buffer | null;
  authorization_sealed: Buffer | null;
  secret_versions: number[] | null;
  secrets_sealed: Buffer[] | null;
  /** A row this claim leased; without `id`, its delivery had finished already (a stale row). */
  leased_id: string | null;
  leased_attempt: number | null;
  // The claimed delivery, when this row has one.
  id: string | null;
  attempt: number | null;
  tenant_id: string;
  message_id: string;
  event_type: string;
  lost_attempt: boolean | null;
  next_trigger: AttemptTrigger;
  cancel_retries: boolean;
  expires_at: Date;
  content_type: string;
  body: Buffer | null;
  last_status_code: number | null;
  message_created_at: Date;
  deliver_at: Date;
  traceparent: string | null;
  /** The delivery's number in its endpoint's order (ordered endpoints), as a string (bigint). */
  sequence: string | null;
}

/**
 * One round trip for a batch of endpoints (those of the partitions this worker owns): the endpoints' configuration
 * and circuit, the foreign leases that count against their max_concurrency, their due rows (oldest first, SKIP
 * LOCKED, as many as each may start) leased to this worker with the attempt number raised (the settlement fence;
 * the lease is what shows a delivery in flight, the wide deliveries row is not written), a probe's circuit
 * half-opened, and each endpoint's next due time. Body bytes are read only for deliveries that will be sent.
 */
const CLAIM_SQL = hotStatement(
  'engine_claim_v9',
  `
WITH owned AS (
  -- Only the partitions this worker owns under a live lease; FOR KEY SHARE makes another worker's take (FOR UPDATE)
  -- wait for this claim, so two workers never claim for one endpoint at once, while the owner's own lease renewal
  -- (a plain UPDATE) never waits for it.
  SELECT partition FROM dispatch_partitions WHERE owner = $4 AND lease_until > now() FOR KEY SHARE
), want AS (
  SELECT w.* FROM unnest($1::text[], $2::int[], $3::int[], $11::int[]) WITH ORDINALITY AS w(endpoint_id, n, mine, headroom, ord)
   WHERE svc_dispatch_partition(w.endpoint_id, $7) IN (SELECT partition FROM owned)
), lane AS (
  SELECT w.endpoint_id, w.n, w.mine, w.headroom, w.ord, e.team_id, e.version, e.status, e.deleted_at IS NOT NULL AS deleted, e.max_concurrency,
         e.ordering = 'ordered' AS ordered,
         e.rate_per_second, e.timeout_seconds, e.url, e.url_revision, e.retry_delays_seconds, e.headers_sealed,
         e.authorization_sealed, h.circuit, h.consecutive_failures, h.last_success_at, h.last_failure_at,
         h.next_probe_at, h.probe_wait_seconds, h.version AS health_version,
         (SELECT count(*) FROM delivery_queue f
           WHERE f.endpoint_id = w.endpoint_id AND f.lease_owner IS NOT NULL AND f.lease_owner <> $4
             AND f.due_at > $5)::int AS foreign_in_flight
    -- A stream endpoint's receiver fetches its deliveries (packages/core/src/streams/): never claimed here, so the
    -- dispatcher drops its lane like an endpoint that is gone.
    FROM want w JOIN endpoints e ON e.id = w.endpoint_id AND e.delivery_mode = 'push'
    LEFT JOIN endpoint_health h ON h.endpoint_id = w.endpoint_id
), quota AS (
  SELECT l.*, coalesce(l.circuit, 'closed') <> 'closed' AND NOT l.deleted AND l.status = 'enabled' AS probing,
         CASE WHEN l.deleted OR l.status = 'disabled' THEN l.n
              WHEN l.status = 'paused' THEN 0
              WHEN coalesce(l.circuit, 'closed') <> 'closed'
                THEN CASE WHEN (l.next_probe_at IS NULL OR l.next_probe_at <= $5) AND l.mine + l.foreign_in_flight = 0
                          THEN least(l.n, 1) ELSE 0 END
              WHEN l.ordered THEN greatest(0, least(l.n, 1 - l.mine - l.foreign_in_flight))
              ELSE greatest(0, least(l.n, l.max_concurrency - l.mine - l.foreign_in_flight)) END AS take
    FROM lane l
), slot_rows AS (
  -- Every worker's slot row, locked in ID order: claims across workers take slots one after another, and each reads
  -- the newest counts (a locking read sees the latest committed row, whatever the statement's snapshot).
  SELECT s.worker_id, s.in_use, s.teams, s.starved FROM dispatch_slots s ORDER BY s.worker_id FOR UPDATE
), capacity AS (${othersSlotsSql('slot_rows', '$4', '$12')}
), budgeted AS (
  -- The deployment's slots, in the order the owner asked (its fair order): a lane gets what is left after the lanes
  -- before it, less its headroom (the slots it must leave free: the reserve for a slow lane). Finishing a deleted or disabled endpoint's rows sends
  -- nothing and takes no slot.
  SELECT q.*, q.deleted OR q.status = 'disabled' AS slotless,
         CASE WHEN q.deleted OR q.status = 'disabled' THEN q.take
              ELSE greatest(0, least(q.take,
                     $9::int - q.headroom - c.others_in_use - $10::int
                     - coalesce(sum(q.take) FILTER (WHERE NOT (q.deleted OR q.status = 'disabled'))
                         OVER (ORDER BY q.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)))
         END AS granted
    FROM quota q CROSS JOIN capacity c
), head AS (
  -- An ordered endpoint's head: its waiting row with the lowest number, due or not, leased or not. Only the head
  -- may be claimed, and only once it is due; it is read before it is locked, so a head that another transaction
  -- holds is never skipped for the row behind it (the lock below then skips it and nothing is claimed).
  SELECT quota.endpoint_id, h.delivery_id, h.due_at
    FROM quota, LATERAL (
      SELECT q.delivery_id, q.due_at FROM delivery_queue q
       WHERE q.endpoint_id = quota.endpoint_id AND q.sequence IS NOT NULL
       ORDER BY q.sequence LIMIT 1) h
   WHERE quota.ordered
), picked AS (
  SELECT p.delivery_id, p.endpoint_id, quota.timeout_seconds
    FROM budgeted quota, LATERAL (
      SELECT q.delivery_id, q.endpoint_id FROM delivery_queue q
       WHERE q.endpoint_id = quota.endpoint_id AND q.due_at <= $5
         AND (cardinality($8::text[]) = 0 OR q.delivery_id = ANY($8::text[]))
       ORDER BY q.due_at LIMIT quota.granted FOR UPDATE SKIP LOCKED) p
   WHERE quota.granted > 0 AND NOT quota.ordered
  UNION ALL
  SELECT p.delivery_id, p.endpoint_id, quota.timeout_seconds
    FROM budgeted quota JOIN head ON head.endpoint_id = quota.endpoint_id, LATERAL (
      SELECT q.delivery_id, q.endpoint_id FROM delivery_queue q
       WHERE q.delivery_id = head.delivery_id AND q.due_at <= $5
         AND (cardinality($8::text[]) = 0 OR q.delivery_id = ANY($8::text[]))
       FOR UPDATE SKIP LOCKED) p
   WHERE quota.granted > 0
), leased AS (
  UPDATE delivery_queue q
     SET lease_owner = $4, attempt = q.attempt + 1,
         due_at = $5::timestamptz + make_interval(secs => p.timeout_seconds + $6::float8)
    FROM picked p
   -- The ANY reaches the picked rows through the primary key whatever the plan's row estimates (a generic plan
   -- made beside a small queue otherwise walks the whole queue for each picked row).
   WHERE q.delivery_id = ANY (ARRAY(SELECT delivery_id FROM picked)) AND q.delivery_id = p.delivery_id
  RETURNING q.delivery_id, q.endpoint_id, q.attempt, q.due_at
), my_slots AS (
  -- This worker's count: what it ran when it asked plus what it takes now (stale-high while its attempts settle,
  -- never low: its next claim or idle report writes it again). Joined with capacity, so every slot row is locked in
  -- ID order (slot_rows) before this one is written.
  UPDATE dispatch_slots s
     SET in_use = $10::int + (SELECT count(*) FROM picked p JOIN budgeted b ON b.endpoint_id = p.endpoint_id
                               WHERE NOT b.slotless)::int,
         teams = $13, starved = $14
    FROM capacity
   WHERE s.worker_id = $4 AND $15::bool
), probe AS (
  UPDATE endpoint_health h SET circuit = 'half_open', next_probe_at = l.due_at
    FROM leased l JOIN quota ON quota.endpoint_id = l.endpoint_id
   WHERE quota.probing AND h.endpoint_id = l.endpoint_id
  -- The row's new version (every write moves it): the probe's settlement writes against this one.
  RETURNING h.endpoint_id, h.version
), marked AS (
  -- The claimed deliveries, read (not written: an attempt in flight is its queue row's lease). The queue row's
  -- lock orders this claim after any change of the delivery's state (each such change takes the row first).
  SELECT d.id, l.attempt, d.team_id, d.tenant_id, d.message_id, d.endpoint_id, d.event_type, d.status,
         d.attempt_count, d.next_trigger, d.cancel_retries, d.expires_at, d.content_type, d.body, d.last_status_code,
         d.sequence
    FROM leased l JOIN deliveries d ON d.id = l.delivery_id
   WHERE d.id = ANY (ARRAY(SELECT delivery_id FROM leased)) AND d.status IN ('queued', 'retry_wait', 'in_flight')
)
SELECT c.others_in_use, c.others_starved_teams, quota.team_id, quota.granted,
       quota.endpoint_id, quota.version, quota.status, quota.deleted, quota.max_concurrency, quota.rate_per_second,
       quota.circuit, quota.consecutive_failures, quota.last_success_at, quota.last_failure_at, quota.next_probe_at,
       quota.probe_wait_seconds, coalesce(pr.version, quota.health_version) AS health_version, quota.foreign_in_flight, quota.probing, quota.url, quota.url_revision,
       quota.timeout_seconds, quota.retry_delays_seconds, quota.headers_sealed, quota.authorization_sealed,
       -- The first row after those this claim took: at most take + 1 entries of the (endpoint_id, due_at) index,
       -- however many rows wait behind the endpoint. (A row another transaction held was skipped, not taken: then
       -- this may name a taken row's due time, and the owner simply looks again.)
       CASE WHEN quota.ordered
            -- Ordered: the head's due time, or (the head taken) the next row's, which can go once the head settles.
            THEN (SELECT q.due_at FROM delivery_queue q
                   WHERE q.endpoint_id = quota.endpoint_id AND q.sequence IS NOT NULL
                   ORDER BY q.sequence
                  OFFSET (SELECT count(*) FROM picked p WHERE p.endpoint_id = quota.endpoint_id) LIMIT 1)
            ELSE (SELECT q.due_at FROM delivery_queue q
                   WHERE q.endpoint_id = quota.endpoint_id
                   ORDER BY q.due_at
                  OFFSET (SELECT count(*) FROM picked p WHERE p.endpoint_id = quota.endpoint_id) LIMIT 1)
       END AS next_due_at,
       s.secret_versions, s.secrets_sealed, l.delivery_id AS leased_id, l.attempt AS leased_attempt,
       m.id, m.attempt, m.tenant_id, m.message_id, m.event_type,
       -- An earlier attempt that never settled (its lease lapsed): this one is its retry.
       m.attempt - 1 > m.attempt_count AS lost_attempt, m.next_trigger, m.cancel_retries, m.expires_at, m.content_type, m.last_status_code,
       CASE WHEN m.id IS NOT NULL AND NOT m.cancel_retries AND m.expires_at > $5 AND NOT quota.deleted
                 AND quota.status <> 'disabled'
            THEN coalesce(m.body, (SELECT c.body FROM message_contents c WHERE c.message_id = m.message_id)) END AS body,
       msg.created_at AS message_created_at, msg.deliver_at, msg.traceparent, m.sequence
  FROM capacity c
  LEFT JOIN budgeted quota ON true
  LEFT JOIN probe pr ON pr.endpoint_id = quota.endpoint_id
  LEFT JOIN leased l ON l.endpoint_id = quota.endpoint_id
  LEFT JOIN marked m ON m.id = l.delivery_id
  LEFT JOIN messages msg ON msg.id = m.message_id
  LEFT JOIN LATERAL (
    SELECT array_agg(es.secret_version ORDER BY es.secret_version DESC) AS secret_versions,
           array_agg(es.secret_sealed ORDER BY es.secret_version DESC) AS secrets_sealed
      FROM endpoint_secrets es
     WHERE es.endpoint_id = quota.endpoint_id AND (es.expires_at IS NULL OR es.expires_at > $5)
       AND EXISTS (SELECT 1 FROM marked mm WHERE mm.endpoint_id = quota.endpoint_id)) s ON true
 ORDER BY quota.endpoint_id, m.id`,
);

const REPORT_SQL = hotStatement(
  'engine_report_slots_v2',
  `
WITH mine AS (
  UPDATE dispatch_slots SET in_use = $2::int, teams = $3::int, starved = $4::bool WHERE worker_id = $1
)
${othersSlotsSql('dispatch_slots', '$1', '$5')}`,
);

/**
 * The claim side of the delivery engine. The worker that owns a set of endpoints (docs/delivery.md, "Endpoint
 * ownership") decides in memory how many attempts each may start; one statement claims them for a whole batch of
 * endpoints. Postgres still applies every rule that another process may change meanwhile (the endpoint's status,
 * max_concurrency, circuit and single probe, other workers' leases), so a stale memory never oversteps a limit.
 */
export class DispatchService {
  constructor(private readonly deps: DispatchServiceDeps) {}

  /**
   * Claims for a batch of endpoints, in the order given (the owner's fair order: the deployment's slots go to the
   * first lanes first); the engine claims whatever is due, oldest first. With `slots` and no requests, the claim
   * only writes this worker's slot count (a worker going idle gives its slots back).
   */
  async claim(workerId: string, requests: readonly LaneRequest[], options: ClaimOptions = {}): Promise<ClaimResult> {
    if (requests.length === 0 && !options.slots)
      return { attempts: [], lanes: [], finished: [], capacity: { othersInUse: 0, othersStarvedTeams: 0 } };
    const now = this.deps.clock.now();
    const rows = await this.deps.hot.query<ClaimRow>(CLAIM_SQL, this.claimParams(workerId, requests, options, now));
    return this.claimed(workerId, rows, now);
  }

  /**
   * A settlement statement (SettlementService's, with its parameters) and then a claim, in one transaction and one
   * round trip: the claim takes its snapshot after the settlement, so the head an ordered endpoint just settled is
   * gone and the row behind it is its head (docs/delivery.md, "Ordered endpoints"), and the slot the settled attempt
   * held is free for it. Answers the settlement's rows and the claim; nothing is written when it throws.
   */
  async settleAndClaim(
    workerId: string,
    settle: { statement: HotStatement; params: readonly unknown[] },
    requests: readonly LaneRequest[],
    options: ClaimOptions,
  ): Promise<{ settleRows: unknown[]; claim: ClaimResult }> {
    const now = this.deps.clock.now();
    const [settleRows, claimRows] = await this.deps.hot.transactionInOneRoundTrip([
      { statement: settle.statement, values: settle.params },
      { statement: CLAIM_SQL, values: this.claimParams(workerId, requests, options, now) },
    ]);
    return { settleRows: settleRows!, claim: await this.claimed(workerId, claimRows as ClaimRow[], now) };
  }

  private claimParams(workerId: string, requests: readonly LaneRequest[], options: ClaimOptions, now: Date): unknown[] {
    const { onlyDeliveryIds = [], slots } = options;
    return [
      requests.map((r) => r.endpointId),
      requests.map((r) => Math.max(0, r.want)),
      requests.map((r) => r.mine),
      workerId,
      now,
      LEASE_MARGIN_MS / 1000,
      DISPATCH_PARTITIONS,
      onlyDeliveryIds,
      slots?.limit ?? UNLIMITED_SLOTS,
      slots?.running ?? 0,
      requests.map((r) => r.headroom ?? 0),
      this.deps.deadAfterSeconds ?? DEFAULT_OWNERSHIP.deadAfterSeconds,
      slots?.teams ?? 0,
      slots?.starved ?? false,
      slots !== undefined,
    ];
  }

  /** What a claim's rows say: the attempts to make, the lanes as read, and what was finished instead of attempted. */
  private async claimed(workerId: string, rows: readonly ClaimRow[], now: Date): Promise<ClaimResult> {
    const lanes = new Map<string, LaneState>();
    const capacity = capacityOf(rows[0]);
    const leased = rows.filter((row) => row.endpoint_id !== null); // Not the capacity row of a claim without requests.
    for (const row of leased) if (!lanes.has(row.endpoint_id)) lanes.set(row.endpoint_id, toLane(row));
    // Shared with the stream claim (deliveries/claimed-rows.ts): attempted, finished instead, stale or given back.
    const { attempts, finished, stale, sealedElsewhere } = sortClaimedRows(
      leased,
      now,
      (row) => row.attempt!,
      (row) => this.toAttempt(row, now),
    );
    const mismatched = sealedElsewhere.map(({ row, error }) => mismatchedDelivery(row, error));
    if (finished.length > 0) await finishDeliveries(this.deps.db, workerId, finished, now, this.deps.events);
    if (stale.length > 0) await dropStaleRows(this.deps.db, workerId, stale);
    if (mismatched.length > 0) await this.deps.keyMismatches.release(workerId, mismatched);
    return { attempts, lanes: [...lanes.values()], finished, capacity };
  }

  /**
   * This worker's slot row written (its count can only go down here: what it runs now) and the other live workers'
   * counts read, without the claim's locks: a worker whose work waits for slots, or that went idle, tells and asks
   * without making every other worker's claim wait for it. Lowering a count never lets a claim grant too much, and a
   * count read here only plans; the claim that takes slots reads them under its locks.
   */
  async reportSlots(workerId: string, slots: Pick<SlotClaim, 'running' | 'teams' | 'starved'>): Promise<SlotCapacity> {
    const rows: { others_in_use: number; others_starved_teams: number }[] = await this.deps.hot.query(REPORT_SQL, [
      workerId,
      slots.running,
      slots.teams,
      slots.starved,
      this.deps.deadAfterSeconds ?? DEFAULT_OWNERSHIP.deadAfterSeconds,
    ]);
    return capacityOf(rows[0]);
  }

  private toAttempt(row: ClaimRow, now: Date): ClaimedAttempt {
    const { credentials, clock } = this.deps;
    const signingSecrets = (row.secret_versions ?? []).map((version, i) =>
      credentials.secrets.open(row.endpoint_id, version, row.secrets_sealed![i]!),
    );
    return {
      deliveryId: row.id!,
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      teamId: row.team_id,
      tenantId: row.tenant_id,
      eventType: row.event_type,
      attemptId: newId('attempt', clock),
      attemptNumber: row.attempt!,
      trigger: row.probing ? 'probe' : row.lost_attempt ? 'retry' : row.next_trigger,
      url: row.url,
      urlRevision: row.url_revision,
      timeoutMs: row.timeout_seconds * 1000,
      contentType: row.content_type,
      body: row.body!,
      headers: credentials.openHeaders({ id: row.endpoint_id, headersSealed: row.headers_sealed }),
      authorization: credentials.openAuthorization({
        id: row.endpoint_id,
        authorizationSealed: row.authorization_sealed,
      }),
      signingSecrets,
      retryDelaysSeconds: row.retry_delays_seconds,
      expiresAt: row.expires_at,
      dueSince: row.message_created_at > row.deliver_at ? row.message_created_at : row.deliver_at,
      startedAt: now,
      traceparent: row.traceparent,
      sequence: row.sequence === null ? null : String(row.sequence),
    };
  }
}

/** What a claim or a report read of the other live workers' slots. */
function capacityOf(row: { others_in_use: number; others_starved_teams: number } | undefined): SlotCapacity {
  return { othersInUse: row?.others_in_use ?? 0, othersStarvedTeams: row?.others_starved_teams ?? 0 };
}

function toLane(row: ClaimRow): LaneState {
  return {
    endpointId: row.endpoint_id,
    teamId: row.team_id,
    granted: row.granted,
    version: String(row.version),
    status: row.status,
    deleted: row.deleted,
    maxConcurrency: row.max_concurrency,
    ratePerSecond: row.rate_per_second,
    health: {
      circuit: row.circuit ?? 'closed',
      consecutiveFailures: row.consecutive_failures ?? 0,
      lastSuccessAt: row.last_success_at,
      lastFailureAt: row.last_failure_at,
      nextProbeAt: row.next_probe_at,
      probeWaitSeconds: row.probe_wait_seconds ?? 60,
      version: row.health_version === null ? null : String(row.health_version),
    },
    foreignInFlight: row.foreign_in_flight,
    nextDueAt: row.next_due_at,
  };
}
