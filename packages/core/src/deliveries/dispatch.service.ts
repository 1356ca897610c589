import type { DataSource, EntityManager } from 'typeorm';
import { addMs, SECOND, type Clock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import { retryOnConflict } from '../common/transaction.js';
import type { EndpointCredentialsService } from '../endpoints/endpoint-credentials.service.js';
import type { JobQueue, NewJob } from '../jobs/job-queue.js';
import { deliveryAttemptJob } from './delivery.jobs.js';
import type { AttemptTrigger } from './delivery-policy.js';
import {
  recordFinished,
  type DeliveryRow,
  type EngineEventSink,
  type FinishedDelivery,
  type HealthRow,
} from './delivery-records.js';

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
}

export interface DispatchLimits {
  /** Requests in flight across every worker process (the spec's service_concurrency). */
  serviceConcurrency: number;
  /** Attempts started per second across every worker process (the spec's dispatch_rate). */
  dispatchRate: number;
}

export interface DispatchServiceDeps {
  db: DataSource;
  clock: Clock;
  jobs: JobQueue;
  credentials: EndpointCredentialsService;
  events: EngineEventSink;
  limits: DispatchLimits;
}

/** How long an attempt may hold its delivery beyond the endpoint's timeout before another worker may take it. */
const LEASE_MARGIN_MS = 30 * SECOND;
/** A paused endpoint's deliveries look again after this long (their deadlines keep running). */
const PAUSED_RECHECK_MS = 30 * SECOND;
const BUSY_RETRY_MS = 100;

type Decision =
  | { kind: 'attempt'; trigger: AttemptTrigger }
  | { kind: 'defer'; until: Date }
  | { kind: 'finish'; status: 'expired' | 'canceled'; reason: string }
  | { kind: 'skip' };

/**
 * The claim side of the delivery engine. A batch of due delivery jobs is claimed in one transaction: the
 * deliveries are locked, their endpoints' health rows locked in a fixed order (so concurrency, rate and the
 * single probe hold across every worker process), and each delivery is attempted now, deferred to a later job,
 * or finished (expired, canceled). Attempts start with status in_flight and a lease.
 */
export class DispatchService {
  constructor(private readonly deps: DispatchServiceDeps) {}

  async claim(deliveryIds: readonly string[]): Promise<ClaimedAttempt[]> {
    if (deliveryIds.length === 0) return [];
    const { db, clock } = this.deps;
    return retryOnConflict(() =>
      db.transaction(async (tx) => {
        const now = clock.now();
        // Health rows first, then deliveries: settlement holds an endpoint's health row while it cancels that
        // endpoint's waiting deliveries (410, private address), so taking them the other way round deadlocks with it.
        const endpointIds = (
          (await tx.query(`SELECT DISTINCT endpoint_id FROM deliveries WHERE id = ANY($1::text[])`, [deliveryIds])) as {
            endpoint_id: string;
          }[]
        )
          .map((r) => r.endpoint_id)
          .sort();
        await this.lockHealth(tx, endpointIds);
        const rows: DeliveryRow[] = await tx.query(
          `SELECT d.id, d.team_id, d.tenant_id, d.message_id, d.endpoint_id, d.event_type, d.status, d.attempt_count,
                d.next_attempt_at, d.next_trigger, d.lease_expires_at, d.cancel_retries, d.expires_at, d.content_type,
                coalesce(d.body, c.body) AS body, m.created_at AS message_created_at, m.deliver_at,
                e.status AS endpoint_status, e.deleted_at IS NOT NULL AS endpoint_deleted, e.url, e.url_revision,
                e.timeout_seconds, e.max_concurrency, e.rate_per_second, e.retry_delays_seconds, e.headers_sealed,
                e.authorization_sealed
           FROM deliveries d
           JOIN endpoints e ON e.id = d.endpoint_id
           JOIN messages m ON m.id = d.message_id
           LEFT JOIN message_contents c ON c.message_id = d.message_id
          WHERE d.id = ANY($1::text[])
          ORDER BY d.id
            FOR UPDATE OF d`,
          [deliveryIds],
        );
        const health = await this.readHealth(tx, endpointIds, now);
        const global = await this.globalBudget(tx, now);

        const attempts: ClaimedAttempt[] = [];
        const deferred: NewJob<{ delivery_id: string }>[] = [];
        const finished: FinishedDelivery[] = [];
        const claimedPerEndpoint = new Map<string, number>();
        const probes = new Set<string>();
        const tokensUsed = new Map<string, number>();

        for (const row of rows) {
          const h = health.get(row.endpoint_id)!;
          const decision = this.decide(row, h, now, {
            claimed: claimedPerEndpoint.get(row.endpoint_id) ?? 0,
            probeTaken: probes.has(row.endpoint_id),
            tokensUsed: tokensUsed.get(row.endpoint_id) ?? 0,
            globalFree: global.free - attempts.length,
          });
          if (decision.kind === 'skip') continue;
          if (decision.kind === 'defer') {
            deferred.push({ payload: { delivery_id: row.id }, startAfter: decision.until });
            continue;
          }
          if (decision.kind === 'finish') {
            finished.push({
              id: row.id,
              teamId: row.team_id,
              tenantId: row.tenant_id,
              messageId: row.message_id,
              endpointId: row.endpoint_id,
              status: decision.status,
              attempts: row.attempt_count,
              lastStatusCode: null,
              reason: decision.reason,
            });
            continue;
          }
          if (row.body === null) {
            // Content erased (redaction or retention): nothing left to send.
            finished.push({
              id: row.id,
              teamId: row.team_id,
              tenantId: row.tenant_id,
              messageId: row.message_id,
              endpointId: row.endpoint_id,
              status: 'canceled',
              attempts: row.attempt_count,
              lastStatusCode: null,
              reason: 'content_erased',
            });
            continue;
          }
          claimedPerEndpoint.set(row.endpoint_id, (claimedPerEndpoint.get(row.endpoint_id) ?? 0) + 1);
          tokensUsed.set(row.endpoint_id, (tokensUsed.get(row.endpoint_id) ?? 0) + 1);
          if (decision.trigger === 'probe') probes.add(row.endpoint_id);
          attempts.push(this.toAttempt(row, decision.trigger, now));
        }
        await this.attachSigningSecrets(tx, attempts, now);

        await this.markClaimed(tx, attempts, now);
        await this.markFinished(tx, finished, now);
        await this.updateHealthOnClaim(tx, health, tokensUsed, probes, attempts, now);
        if (attempts.length > 0) await this.takeGlobalTokens(tx, attempts.length, now);
        await this.deps.jobs.send(tx, deliveryAttemptJob, deferred);
        await recordFinished(tx, finished, this.deps.events);
        return attempts;
      }),
    );
  }

  private decide(
    row: DeliveryRow,
    health: HealthRow & { tokens: number },
    now: Date,
    batch: { claimed: number; probeTaken: boolean; tokensUsed: number; globalFree: number },
  ): Decision {
    if (row.status === 'succeeded' || row.status === 'failed' || row.status === 'expired' || row.status === 'canceled')
      return { kind: 'skip' };
    // A live lease: its holder settles the delivery, unless it died or its job failed after the claim (then this
    // job, handed out again by pg-boss, is the only one left). Look again when the lease lapses; never drop it.
    if (row.status === 'in_flight' && row.lease_expires_at !== null && row.lease_expires_at > now)
      return { kind: 'defer', until: row.lease_expires_at };
    // Its attempt died after the message was canceled or redacted: the retry it would get is canceled.
    if (row.status === 'in_flight' && row.cancel_retries)
      return { kind: 'finish', status: 'canceled', reason: 'message_canceled' };
    if (now >= row.expires_at) return { kind: 'finish', status: 'expired', reason: 'window_over' };
    if (row.endpoint_deleted) return { kind: 'finish', status: 'canceled', reason: 'endpoint_deleted' };
    if (row.endpoint_status === 'disabled') return { kind: 'finish', status: 'canceled', reason: 'endpoint_disabled' };
    if (row.next_attempt_at > now) return { kind: 'defer', until: row.next_attempt_at };
    if (row.endpoint_status === 'paused')
      return { kind: 'defer', until: minDate(addMs(now, PAUSED_RECHECK_MS), row.expires_at) };
    let trigger: AttemptTrigger = row.status === 'in_flight' ? 'retry' : row.next_trigger;
    if (health.circuit !== 'closed') {
      // retry_now behind an open circuit does not wait for the probe time: this attempt is the probe. A probe
      // already running (half_open) still goes first.
      const forced = row.next_trigger === 'retry_now' && health.circuit === 'open';
      if (batch.probeTaken || (!forced && health.next_probe_at !== null && health.next_probe_at > now))
        return { kind: 'defer', until: minDate(health.next_probe_at ?? addMs(now, SECOND), row.expires_at) };
      trigger = 'probe';
    }
    const inFlight = Number(health.in_flight) + batch.claimed;
    if (inFlight >= row.max_concurrency || batch.globalFree <= 0)
      return { kind: 'defer', until: addMs(now, BUSY_RETRY_MS + Math.floor(Math.random() * BUSY_RETRY_MS)) };
    if (health.tokens - batch.tokensUsed < 1) {
      const waitMs = Math.ceil(((1 - (health.tokens - batch.tokensUsed)) / row.rate_per_second) * 1000);
      return { kind: 'defer', until: addMs(now, Math.max(1, waitMs)) };
    }
    return { kind: 'attempt', trigger };
  }

  /** Locks the endpoints' health rows in ID order (creating missing ones). */
  private async lockHealth(tx: EntityManager, endpointIds: string[]): Promise<void> {
    if (endpointIds.length === 0) return;
    const lock = async () =>
      (
        (await tx.query(
          `SELECT endpoint_id FROM endpoint_health WHERE endpoint_id = ANY($1::text[]) ORDER BY endpoint_id FOR UPDATE`,
          [endpointIds],
        )) as unknown[]
      ).length;
    if ((await lock()) < endpointIds.length) {
      await tx.query(
        `INSERT INTO endpoint_health (endpoint_id) SELECT unnest($1::text[]) ON CONFLICT (endpoint_id) DO NOTHING`,
        [endpointIds],
      );
      await lock();
    }
  }

  /**
   * The locked health rows with live in-flight counts and refilled rate tokens. Read in a statement after the
   * locks: a statement's snapshot is taken before it waits for a lock, so an in-flight count read by the locking
   * statement itself would miss the claims of the transaction it waited for (READ COMMITTED), and two workers
   * would both see a free slot.
   */
  private async readHealth(
    tx: EntityManager,
    endpointIds: string[],
    now: Date,
  ): Promise<Map<string, HealthRow & { tokens: number; rate: number }>> {
    if (endpointIds.length === 0) return new Map();
    const rows = (await tx.query(
      `SELECT h.endpoint_id, h.circuit, h.consecutive_failures, h.last_success_at, h.last_failure_at, h.next_probe_at,
              h.probe_wait_seconds, h.rate_tokens, h.rate_updated_at, e.rate_per_second,
              (SELECT count(*) FROM deliveries x
                WHERE x.endpoint_id = h.endpoint_id AND x.status = 'in_flight' AND x.lease_expires_at > $2) AS in_flight
         FROM endpoint_health h JOIN endpoints e ON e.id = h.endpoint_id
        WHERE h.endpoint_id = ANY($1::text[])
        ORDER BY h.endpoint_id`,
      [endpointIds, now],
    )) as (HealthRow & { rate_per_second: number })[];
    const result = new Map<string, HealthRow & { tokens: number; rate: number }>();
    for (const row of rows) {
      const rate = row.rate_per_second;
      const elapsed = row.rate_updated_at ? Math.max(0, (now.getTime() - row.rate_updated_at.getTime()) / 1000) : 0;
      const tokens = row.rate_tokens === null ? rate : Math.min(rate, row.rate_tokens + elapsed * rate);
      result.set(row.endpoint_id, { ...row, tokens, rate });
    }
    return result;
  }

  /**
   * The deployment-wide budget: requests in flight across every worker (service_concurrency) and attempts per
   * second (dispatch_rate, a token bucket). Claims take a transaction-scoped lock on it, so workers claim one
   * batch at a time; a claim is a few milliseconds.
   */
  private async globalBudget(tx: EntityManager, now: Date): Promise<{ free: number }> {
    const { serviceConcurrency, dispatchRate } = this.deps.limits;
    // The lock in a statement of its own, so that the counts below are read after it (see lockHealth).
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('dispatch-budget', 0))`);
    const rows: { in_flight: string; tokens: number | null; updated_at: Date | null }[] = await tx.query(
      `SELECT (SELECT count(*) FROM deliveries WHERE status = 'in_flight' AND lease_expires_at > $1) AS in_flight,
              b.tokens, b.updated_at
         FROM (SELECT 1) one LEFT JOIN rate_limit_buckets b ON b.team_id = '*' AND b.bucket = 'dispatch'`,
      [now],
    );
    const row = rows[0]!;
    const elapsed = row.updated_at ? Math.max(0, (now.getTime() - row.updated_at.getTime()) / 1000) : 0;
    const tokens = row.tokens === null ? dispatchRate : Math.min(dispatchRate, row.tokens + elapsed * dispatchRate);
    return { free: Math.max(0, Math.min(serviceConcurrency - Number(row.in_flight), Math.floor(tokens))) };
  }

  private async takeGlobalTokens(tx: EntityManager, count: number, now: Date): Promise<void> {
    const rate = this.deps.limits.dispatchRate;
    await tx.query(
      `INSERT INTO rate_limit_buckets AS b (team_id, bucket, tokens, updated_at)
       VALUES ('*', 'dispatch', $1::float8 - $3::int, $2)
       ON CONFLICT (team_id, bucket) DO UPDATE
         SET tokens = LEAST($1::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM ($2 - b.updated_at))) * $1::float8)
                      - $3::int,
             updated_at = GREATEST(b.updated_at, $2)`,
      [rate, now, count],
    );
  }

  /** Every secret that signs now, for all the batch's endpoints in one query: current first, then overlapping. */
  private async attachSigningSecrets(tx: EntityManager, attempts: ClaimedAttempt[], now: Date): Promise<void> {
    if (attempts.length === 0) return;
    const endpointIds = [...new Set(attempts.map((a) => a.endpointId))];
    const rows: { endpoint_id: string; secret_version: number; secret_sealed: Buffer }[] = await tx.query(
      `SELECT endpoint_id, secret_version, secret_sealed FROM endpoint_secrets
        WHERE endpoint_id = ANY($1::text[]) AND (expires_at IS NULL OR expires_at > $2)
        ORDER BY endpoint_id, secret_version DESC`,
      [endpointIds, now],
    );
    const secrets = new Map<string, string[]>();
    for (const row of rows) {
      const list = secrets.get(row.endpoint_id) ?? [];
      list.push(this.deps.credentials.secrets.open(row.endpoint_id, row.secret_version, row.secret_sealed));
      secrets.set(row.endpoint_id, list);
    }
    for (const attempt of attempts) attempt.signingSecrets = secrets.get(attempt.endpointId) ?? [];
  }

  private toAttempt(row: DeliveryRow, trigger: AttemptTrigger, now: Date): ClaimedAttempt {
    const { credentials } = this.deps;
    return {
      deliveryId: row.id,
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      teamId: row.team_id,
      tenantId: row.tenant_id,
      eventType: row.event_type,
      attemptId: newId('attempt', this.deps.clock),
      attemptNumber: row.attempt_count + 1,
      trigger,
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
      signingSecrets: [],
      retryDelaysSeconds: row.retry_delays_seconds,
      expiresAt: row.expires_at,
      dueSince: maxDate(row.message_created_at, row.deliver_at),
      startedAt: now,
    };
  }

  private async markClaimed(tx: EntityManager, attempts: ClaimedAttempt[], now: Date): Promise<void> {
    if (attempts.length === 0) return;
    await tx.query(
      `UPDATE deliveries d
          SET status = 'in_flight', attempt_count = x.number, lease_expires_at = x.lease, updated_at = $3
         FROM unnest($1::text[], $2::int[], $4::timestamptz[]) AS x(id, number, lease)
        WHERE d.id = x.id`,
      [
        attempts.map((a) => a.deliveryId),
        attempts.map((a) => a.attemptNumber),
        now,
        attempts.map((a) => addMs(now, a.timeoutMs + LEASE_MARGIN_MS)),
      ],
    );
  }

  private async markFinished(tx: EntityManager, finished: FinishedDelivery[], now: Date): Promise<void> {
    if (finished.length === 0) return;
    await tx.query(
      `UPDATE deliveries d
          SET status = x.status, last_error = x.reason, lease_expires_at = NULL, finished_at = $3, updated_at = $3
         FROM unnest($1::text[], $2::text[], $4::text[]) AS x(id, status, reason)
        WHERE d.id = x.id`,
      [finished.map((f) => f.id), finished.map((f) => f.status), now, finished.map((f) => f.reason)],
    );
  }

  /** Rate tokens spent, and a probe's next_probe_at pushed past its lease so no second probe goes meanwhile. */
  private async updateHealthOnClaim(
    tx: EntityManager,
    health: Map<string, HealthRow & { tokens: number; rate: number }>,
    tokensUsed: Map<string, number>,
    probes: Set<string>,
    attempts: ClaimedAttempt[],
    now: Date,
  ): Promise<void> {
    const ids = [...tokensUsed.keys()];
    if (ids.length === 0) return;
    const probeUntil = (id: string) => {
      const attempt = attempts.find((a) => a.endpointId === id && a.trigger === 'probe');
      return attempt ? addMs(now, attempt.timeoutMs + LEASE_MARGIN_MS) : null;
    };
    await tx.query(
      `UPDATE endpoint_health h
          SET rate_tokens = x.tokens, rate_updated_at = $3,
              next_probe_at = coalesce(x.probe_until, h.next_probe_at),
              circuit = CASE WHEN x.probe_until IS NOT NULL THEN 'half_open' ELSE h.circuit END
         FROM unnest($1::text[], $2::float8[], $4::timestamptz[]) AS x(endpoint_id, tokens, probe_until)
        WHERE h.endpoint_id = x.endpoint_id`,
      [
        ids,
        ids.map((id) => health.get(id)!.tokens - (tokensUsed.get(id) ?? 0)),
        now,
        ids.map((id) => (probes.has(id) ? probeUntil(id) : null)),
      ],
    );
  }
}

function minDate(a: Date, b: Date): Date {
  return a < b ? a : b;
}

function maxDate(a: Date, b: Date): Date {
  return a > b ? a : b;
}
