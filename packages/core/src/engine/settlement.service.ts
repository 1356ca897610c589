import { holdOrderedEndpoints, type EndedDelivery } from '../deliveries/ordering.js';
import type { DataSource, EntityManager } from 'typeorm';
import { hotStatement, type HotSql, type HotStatement } from '@svc/db';
import type { FailureDetail } from '@svc/egress';
import { errorDetailJson } from '../deliveries/attempt-error-detail.js';
import { settledFactsSql } from '../analytics/analytics-facts.js';
import type { Clock } from '../common/clock.js';
import { queryPrepared, retryOnConflict } from '../common/transaction.js';
import {
  decideAfterAttempt,
  describeResult,
  healthAfterAttempt,
  isSuccess,
  type AttemptResult,
  type DeliveryDecision,
  type EndpointHealthState,
} from '../deliveries/delivery-policy.js';
import { SETTLEMENT_SHARDS, type EngineEvent, type EngineEventSink } from '../deliveries/delivery-records.js';
import type { ClaimedAttempt } from './dispatch.service.js';

/** What one attempt produced, as the worker hands it to settlement. */
export interface AttemptOutcome {
  attempt: ClaimedAttempt;
  result: AttemptResult;
  durationMs: number;
  /** Up to 4 KiB of the response body (kept only when the team logs response bodies). */
  responseBody: Buffer | null;
  /** 0 to 1: the share of the 20% jitter this retry gets. */
  jitter: number;
  /** Where and why an attempt without an HTTP answer failed (attempts.error_detail). */
  failureDetail?: FailureDetail | null;
}

/** How one outcome was settled: the decision, and whether it still held its lease (a stale one changes nothing). */
export interface SettledOutcome {
  decision: DeliveryDecision;
  /** False when the lease had passed to another attempt or the delivery had finished: only the attempt was kept. */
  applied: boolean;
}

export interface SettlementResult {
  outcomes: SettledOutcome[];
  /** Each endpoint's circuit after the batch, as written, with the row's new version (the owner keeps it in memory). */
  health: Map<string, EndpointHealthState>;
  /**
   * Endpoints whose circuit this batch did not write because their row had moved since the owner read it (another
   * worker's settlement during a handoff, a resume, retry_now): what memory holds of them is stale; the next claim
   * reads them again. Their circuit events were not emitted.
   */
  stale: string[];
  /**
   * Endpoints this batch disabled (410, an unsafe destination): their waiting deliveries are the caller's to cancel,
   * outside the settlement (DispatchOwnershipService.cancelDisabledBacklogs; the reconciliation sweep does it too).
   */
  disabled: string[];
}

export interface SettlementDeps {
  db: DataSource;
  hot: HotSql;
  clock: Clock;
  events: EngineEventSink;
  /** The console's address (SVC_CONSOLE_URL), for the endpoint links of failing and recovered events; null: none. */
  consoleUrl?: string | null;
}

/** A health row is rewritten for a success only when its last success is older than this. */
const SUCCESS_WRITE_INTERVAL_MS = 1000;

/** The analytics facts of the batch's attempts and of the deliveries they finished, from SETTLE_SQL's CTEs. */
const SETTLED_FACTS = settledFactsSql({ attempts: 'x', ended: 'ended' });

/**
 * One statement settles a batch. Only outcomes whose lease still holds (this worker, this attempt number) change
 * their delivery: a finished one's queue row goes, a retry's row becomes due at its next time; a retry of a
 * delivery canceled meanwhile is canceled. Every attempt is recorded (it happened), with its analytics fact; the
 * finished deliveries' facts and queue counters move with them.
 */
const SETTLE_SQL = hotStatement(
  'engine_settle_v6',
  `
WITH x AS (
  SELECT u.*, coalesce(d.cancel_retries, false) AS cancel_retries,
         CASE WHEN u.status = 'retry_wait' AND d.cancel_retries THEN 'canceled' ELSE u.status END AS final
    FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[],
                $9::text[], $10::timestamptz[], $11::int[], $12::bigint[], $13::int[], $14::text[], $15::bytea[],
                $16::text[], $17::text[], $30::jsonb[])
         AS u(id, number, team_id, tenant_id, endpoint_id, message_id, status, next, trigger, started_at, duration_ms,
              url_revision, code, error_kind, response_body, attempt_id, last_error, error_detail)
    -- Every table is reached through its key with = ANY of the batch's IDs: a generic plan's row estimates (made
    -- beside small tables) then cannot turn a lookup into a walk of the whole table.
    LEFT JOIN (SELECT id, cancel_retries FROM deliveries WHERE id = ANY ($1::text[])) d ON d.id = u.id
), gone AS (
  DELETE FROM delivery_queue q USING x
   WHERE q.delivery_id = ANY ($1::text[]) AND q.delivery_id = x.id AND q.lease_owner = $18 AND q.attempt = x.number AND x.final <> 'retry_wait'
  RETURNING q.delivery_id
), kept AS (
  UPDATE delivery_queue q SET due_at = x.next, lease_owner = NULL
    FROM x WHERE q.delivery_id = ANY ($1::text[]) AND q.delivery_id = x.id AND q.lease_owner = $18 AND q.attempt = x.number AND x.final = 'retry_wait'
  RETURNING q.delivery_id
), upd AS (
  UPDATE deliveries d
     SET status = x.final, attempt_count = x.number, next_attempt_at = coalesce(x.next, d.next_attempt_at),
         next_trigger = CASE WHEN x.final = 'retry_wait' THEN 'retry' ELSE d.next_trigger END, lease_expires_at = NULL,
         last_status_code = x.code,
         last_error = CASE WHEN x.final = 'canceled' THEN 'message_canceled' ELSE x.last_error END,
         last_attempt_at = $19, updated_at = $19,
         finished_at = CASE WHEN x.final IN ('succeeded', 'failed', 'expired', 'canceled') THEN $19::timestamptz END
    FROM x
   WHERE d.id = ANY ($1::text[]) AND d.id = x.id
     AND (EXISTS (SELECT 1 FROM gone WHERE gone.delivery_id = x.id)
          OR EXISTS (SELECT 1 FROM kept WHERE kept.delivery_id = x.id))
  RETURNING d.id, d.attempt_count, d.team_id, d.tenant_id, d.endpoint_id, d.message_id, d.status, d.finished_at
), ended AS (
  SELECT * FROM upd WHERE status IN ('succeeded', 'failed', 'expired', 'canceled')
), attempt_rows AS (
  INSERT INTO attempts (id, delivery_id, team_id, endpoint_id, number, trigger, started_at, duration_ms, url_revision,
                        status_code, error_kind, error_detail, response_body, created_at)
  SELECT x.attempt_id, x.id, x.team_id, x.endpoint_id, x.number, x.trigger, x.started_at, x.duration_ms,
         x.url_revision, x.code, x.error_kind, x.error_detail,
         CASE WHEN coalesce(s.response_body_logging, false) THEN x.response_body END, $19
    FROM x LEFT JOIN team_settings s ON s.team_id = x.team_id
), attempt_facts AS (${SETTLED_FACTS.attempts}
), finished_facts AS (${SETTLED_FACTS.finished}
), endpoint_counts AS (
  INSERT INTO endpoint_queue_counts AS c (endpoint_id, shard, pending)
  SELECT endpoint_id, $20::smallint, -count(*) FROM ended GROUP BY endpoint_id ORDER BY endpoint_id
  ON CONFLICT (endpoint_id, shard) DO UPDATE SET pending = c.pending + EXCLUDED.pending
), team_counts AS (
  INSERT INTO team_queue_counts AS t (team_id, shard, pending)
  SELECT team_id, $20::smallint, -count(*) FROM ended GROUP BY team_id ORDER BY team_id
  ON CONFLICT (team_id, shard) DO UPDATE SET pending = t.pending + EXCLUDED.pending
), health_in AS (
  SELECT * FROM unnest($21::text[], $22::text[], $23::int[], $24::timestamptz[], $25::timestamptz[],
                       $26::timestamptz[], $27::int[], $28::text[], $29::bigint[])
         AS u(endpoint_id, circuit, consecutive_failures, last_success_at, last_failure_at, next_probe_at,
              probe_wait_seconds, last_error, expected)
), health_updated AS (
  -- Fenced: only a row that still has the version the owner read (any other write moved it) is written.
  UPDATE endpoint_health h
     SET circuit = u.circuit, consecutive_failures = u.consecutive_failures, last_success_at = u.last_success_at,
         last_failure_at = u.last_failure_at, next_probe_at = u.next_probe_at,
         probe_wait_seconds = u.probe_wait_seconds,
         -- The last error stays after a success: it is what the endpoint last failed with.
         last_error = coalesce(u.last_error, h.last_error)
    FROM health_in u
   WHERE h.endpoint_id = ANY ($21::text[]) AND h.endpoint_id = u.endpoint_id AND h.version = u.expected
  RETURNING h.endpoint_id, h.version
), health_inserted AS (
  -- The owner read no row: a new one, unless another writer made one meanwhile.
  INSERT INTO endpoint_health (endpoint_id, circuit, consecutive_failures, last_success_at, last_failure_at,
                               next_probe_at, probe_wait_seconds, last_error)
  SELECT endpoint_id, circuit, consecutive_failures, last_success_at, last_failure_at, next_probe_at,
         probe_wait_seconds, last_error
    FROM health_in WHERE expected IS NULL
  ON CONFLICT (endpoint_id) DO NOTHING
  RETURNING endpoint_id, version
)
SELECT id, status, NULL::bigint AS health_version FROM upd
UNION ALL
SELECT endpoint_id, 'health', version FROM health_updated
UNION ALL
SELECT endpoint_id, 'health', version FROM health_inserted`,
);

/**
 * The settle side of the engine. The owner of the endpoints hands a batch of attempt outcomes with its view of
 * their circuits; decisions are made here (pure rules in delivery-policy.ts), and one statement writes them. The
 * rare extras (a circuit that changes, a failure or expiry event, an endpoint the service disables) join it in
 * one transaction.
 */
export class SettlementService {
  constructor(private readonly deps: SettlementDeps) {}

  /**
   * `run`: who executes the one statement of a batch with no events or disables (default: the hot pool). A stream
   * connection passes one that sends it in the same transaction and round trip as its next claim
   * (streams/stream-claim.ts); batches with events always take the transaction below.
   */
  async settle(
    workerId: string,
    outcomes: readonly AttemptOutcome[],
    healthOf: (endpointId: string) => EndpointHealthState,
    run: SettleRunner = (statement, params) => this.deps.hot.query<SettledRow>(statement, params),
  ): Promise<SettlementResult> {
    if (outcomes.length === 0) return { outcomes: [], health: new Map(), stale: [], disabled: [] };
    const now = this.deps.clock.now();
    const decisions = outcomes.map((o) =>
      decideAfterAttempt({
        result: o.result,
        attemptCount: o.attempt.attemptNumber,
        retryDelaysSeconds: o.attempt.retryDelaysSeconds,
        expiresAt: o.attempt.expiresAt,
        now,
        jitter: o.jitter,
      }),
    );
    const { health, changed, expected, lastErrors, events } = this.circuits(outcomes, healthOf, now);
    const disable = new Map<string, { reason: string; teamId: string; tenantId: string }>();
    outcomes.forEach((o, i) => {
      const d = decisions[i]!;
      if (d.status === 'failed' && d.disableEndpoint)
        disable.set(o.attempt.endpointId, {
          reason: d.disableEndpoint,
          teamId: o.attempt.teamId,
          tenantId: o.attempt.tenantId,
        });
    });
    const mayEmit = decisions.some((d) => d.status === 'failed' || d.status === 'expired');
    const simple = disable.size === 0 && events.length === 0 && !mayEmit;

    const params = settleParams(workerId, outcomes, decisions, changed, expected, lastErrors, now);
    const disabled: string[] = [];
    const { applied, written } = simple
      ? await retryOnConflict(async () => settled(await run(SETTLE_SQL, params)))
      : await retryOnConflict(() =>
          this.deps.db.transaction(async (tx) => {
            // With the events and disables in one transaction (rare): TypeORM's connection, the same statement.
            await this.fillRecoveredErrors(tx, events);
            const result = settled(await queryPrepared<SettledRow>(tx, SETTLE_SQL, params));
            const done = result.applied;
            // A circuit this batch did not write (its row moved meanwhile) did not open or recover here.
            const all = events.filter((e) => !changed.has(e.resourceId) || result.written.has(e.resourceId));
            const ended: EndedDelivery[] = [];
            outcomes.forEach((o, i) => {
              const status = done.get(o.attempt.deliveryId);
              if (status !== 'failed' && status !== 'expired') return;
              const d = decisions[i]!;
              ended.push({
                deliveryId: o.attempt.deliveryId,
                messageId: o.attempt.messageId,
                endpointId: o.attempt.endpointId,
                teamId: o.attempt.teamId,
                tenantId: o.attempt.tenantId,
                status,
                reason: 'reason' in d ? d.reason : null,
              });
              all.push({
                type: status === 'failed' ? 'webhooks.delivery.failed' : 'webhooks.delivery.expired',
                teamId: o.attempt.teamId,
                tenantId: o.attempt.tenantId,
                resourceId: o.attempt.deliveryId,
                data: {
                  delivery_id: o.attempt.deliveryId,
                  message_id: o.attempt.messageId,
                  endpoint_id: o.attempt.endpointId,
                  attempts: o.attempt.attemptNumber,
                  last_status_code: o.result.kind === 'response' ? o.result.status : null,
                  reason: 'reason' in d ? d.reason : null,
                },
              });
            });
            disabled.push(...(await this.disableEndpoints(tx, disable, all, now)));
            all.push(...(await holdOrderedEndpoints(tx, ended, now)));
            if (all.length > 0) await this.deps.events.emit(tx, all);
            return result;
          }),
        );
    const stale: string[] = [];
    for (const [id, state] of health) {
      const version = written.get(id);
      if (version !== undefined) health.set(id, { ...state, version });
      else if (changed.has(id)) {
        health.delete(id);
        stale.push(id);
      }
    }
    return {
      outcomes: decisions.map((decision, i) => ({
        decision,
        applied: applied.has(outcomes[i]!.attempt.deliveryId),
      })),
      health,
      stale,
      disabled,
    };
  }

  /**
   * Each endpoint's circuit through the batch's outcomes, in order. A row is written on a transition only: the
   * circuit or the failure count changes, or a success finds the last one over a second old.
   */
  private circuits(
    outcomes: readonly AttemptOutcome[],
    healthOf: (endpointId: string) => EndpointHealthState,
    now: Date,
  ): {
    health: Map<string, EndpointHealthState>;
    changed: Map<string, EndpointHealthState>;
    /** Per endpoint, the row version the owner read (null: no row): a write is fenced by it. */
    expected: Map<string, string | null>;
    lastErrors: Map<string, string>;
    events: EngineEvent[];
  } {
    const health = new Map<string, EndpointHealthState>();
    const changed = new Map<string, EndpointHealthState>();
    const expected = new Map<string, string | null>();
    const lastErrors = new Map<string, string>();
    const events: EngineEvent[] = [];
    for (const { attempt, result } of outcomes) {
      if (!health.has(attempt.endpointId))
        expected.set(attempt.endpointId, healthOf(attempt.endpointId).version ?? null);
      const before = health.get(attempt.endpointId) ?? healthOf(attempt.endpointId);
      const succeeded = isSuccess(result);
      const change = healthAfterAttempt(before, succeeded, attempt.trigger, now);
      health.set(attempt.endpointId, change.health);
      const quietSuccess =
        succeeded &&
        before.circuit === 'closed' &&
        before.consecutiveFailures === 0 &&
        before.lastSuccessAt !== null &&
        now.getTime() - before.lastSuccessAt.getTime() < SUCCESS_WRITE_INTERVAL_MS;
      if (quietSuccess) health.set(attempt.endpointId, before);
      else changed.set(attempt.endpointId, change.health);
      if (!succeeded) lastErrors.set(attempt.endpointId, describeResult(result));
      if (change.recovered)
        events.push({
          type: 'webhooks.endpoint.recovered',
          teamId: attempt.teamId,
          tenantId: attempt.tenantId,
          resourceId: attempt.endpointId,
          data: {
            endpoint_id: attempt.endpointId,
            failures_before: before.consecutiveFailures,
            // Filled in settle's transaction from the health row (or this batch's failures) before it is written.
            last_error: lastErrors.get(attempt.endpointId) ?? null,
            console_url: this.endpointLink(attempt.endpointId),
          },
        });
      if (change.opened)
        events.push({
          type: 'webhooks.endpoint.failing',
          teamId: attempt.teamId,
          tenantId: attempt.tenantId,
          resourceId: attempt.endpointId,
          data: {
            endpoint_id: attempt.endpointId,
            failures: change.health.consecutiveFailures,
            last_error: describeResult(result),
            last_status_code: result.kind === 'response' ? result.status : null,
            next_probe_at: (change.health.nextProbeAt ?? now).toISOString(),
            console_url: this.endpointLink(attempt.endpointId),
          },
        });
    }
    return { health, changed, expected, lastErrors, events };
  }

  /** The endpoint's console page, or null without SVC_CONSOLE_URL. */
  private endpointLink(endpointId: string): string | null {
    const base = this.deps.consoleUrl;
    return base ? `${base.replace(/\/+$/, '')}/endpoints/${endpointId}` : null;
  }

  /**
   * The recovered events' last_error where this batch had no failure of that endpoint: what its health row last
   * recorded, read in the settling transaction before the statement rewrites the row.
   */
  private async fillRecoveredErrors(tx: EntityManager, events: readonly EngineEvent[]): Promise<void> {
    const missing = events.filter((e) => e.type === 'webhooks.endpoint.recovered' && e.data['last_error'] === null);
    if (missing.length === 0) return;
    const rows: { endpoint_id: string; last_error: string | null }[] = await tx.query(
      'SELECT endpoint_id, last_error FROM endpoint_health WHERE endpoint_id = ANY ($1::text[])',
      [missing.map((e) => e.resourceId)],
    );
    const byEndpoint = new Map(rows.map((r) => [r.endpoint_id, r.last_error]));
    for (const event of missing) event.data['last_error'] = byEndpoint.get(event.resourceId) ?? null;
  }

  /**
   * 410 Gone or a destination resolving to a private address: the service disables the endpoint (reason
   * endpoint_gone or unsafe_destination) and emits webhooks.endpoint.disabled. Its waiting deliveries (up to
   * max_pending_deliveries of them) are canceled after this transaction, in bounded batches of their own
   * (DispatchOwnershipService.cancelDisabledBacklogs), never inside a settlement.
   */
  private async disableEndpoints(
    tx: EntityManager,
    disable: Map<string, { reason: string; teamId: string; tenantId: string }>,
    events: EngineEvent[],
    now: Date,
  ): Promise<string[]> {
    if (disable.size === 0) return [];
    const ids = [...disable.keys()].sort();
    // TypeORM answers an UPDATE with [rows, count].
    const [changed]: [{ id: string; version: string }[], number] = await tx.query(
      `UPDATE endpoints e SET status = 'disabled', disabled_reason = x.reason, version = e.version + 1, updated_at = $3
         FROM unnest($1::text[], $2::text[]) AS x(id, reason)
        WHERE e.id = x.id AND e.status <> 'disabled' AND e.deleted_at IS NULL
        RETURNING e.id, e.version`,
      [ids, ids.map((id) => disable.get(id)!.reason), now],
    );
    for (const row of changed) {
      const info = disable.get(row.id)!;
      events.push({
        type: 'webhooks.endpoint.disabled',
        teamId: info.teamId,
        tenantId: info.tenantId,
        resourceId: row.id,
        resourceVersion: String(row.version),
        data: { endpoint_id: row.id, reason: info.reason },
      });
    }
    return changed.map((row) => row.id);
  }
}

function settleParams(
  workerId: string,
  outcomes: readonly AttemptOutcome[],
  decisions: readonly DeliveryDecision[],
  changed: Map<string, EndpointHealthState>,
  expected: ReadonlyMap<string, string | null>,
  lastErrors: ReadonlyMap<string, string>,
  now: Date,
): unknown[] {
  const status = (d: DeliveryDecision) => d.status;
  // Health rows in ID order, like every other writer of them.
  const health = [...changed.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [
    outcomes.map((o) => o.attempt.deliveryId),
    outcomes.map((o) => o.attempt.attemptNumber),
    outcomes.map((o) => o.attempt.teamId),
    outcomes.map((o) => o.attempt.tenantId),
    outcomes.map((o) => o.attempt.endpointId),
    outcomes.map((o) => o.attempt.messageId),
    decisions.map(status),
    decisions.map((d) => (d.status === 'retry_wait' ? d.nextAttemptAt : null)),
    outcomes.map((o) => o.attempt.trigger),
    outcomes.map((o) => o.attempt.startedAt),
    outcomes.map((o) => Math.round(o.durationMs)),
    outcomes.map((o) => o.attempt.urlRevision),
    outcomes.map((o) => (o.result.kind === 'response' ? o.result.status : null)),
    outcomes.map((o) => (o.result.kind === 'response' ? null : o.result.kind)),
    outcomes.map((o) => o.responseBody),
    outcomes.map((o) => o.attempt.attemptId),
    // Why a finished delivery ended (http_500_attempts_exhausted, ...); a retry shows what its attempt got.
    decisions.map((d, i) =>
      d.status === 'succeeded' ? null : 'reason' in d ? d.reason : describeResult(outcomes[i]!.result),
    ),
    workerId,
    now,
    SETTLEMENT_SHARDS[Math.floor(Math.random() * SETTLEMENT_SHARDS.length)]!,
    health.map(([id]) => id),
    health.map(([, h]) => h.circuit),
    health.map(([, h]) => h.consecutiveFailures),
    health.map(([, h]) => h.lastSuccessAt),
    health.map(([, h]) => h.lastFailureAt),
    health.map(([, h]) => h.nextProbeAt),
    health.map(([, h]) => h.probeWaitSeconds),
    health.map(([id]) => lastErrors.get(id) ?? null),
    health.map(([id]) => expected.get(id) ?? null),
    outcomes.map((o) => errorDetailJson(o.failureDetail)),
  ];
}

/** Executes the settlement statement with its parameters and answers its rows. */
export type SettleRunner = (statement: HotStatement, params: unknown[]) => Promise<SettledRow[]>;

/** A settled delivery (its status), or a circuit written (status 'health', with the row's new version). */
export interface SettledRow {
  id: string;
  status: string;
  health_version: string | null;
}

function settled(rows: readonly SettledRow[]): { applied: Map<string, string>; written: Map<string, string> } {
  const applied = new Map<string, string>();
  const written = new Map<string, string>();
  for (const row of rows)
    if (row.status === 'health') written.set(row.id, String(row.health_version));
    else applied.set(row.id, row.status);
  return { applied, written };
}
