import type { DataSource, EntityManager } from 'typeorm';
import { attemptFactsSql } from '../analytics/analytics-facts.js';
import type { Clock } from '../common/clock.js';
import { retryOnConflict } from '../common/transaction.js';
import type { JobQueue, NewJob } from '../jobs/job-queue.js';
import { deliveryAttemptJob } from './delivery.jobs.js';
import {
  decideAfterAttempt,
  FIRST_PROBE_WAIT_SECONDS,
  describeResult,
  healthAfterAttempt,
  isSuccess,
  type AttemptResult,
  type DeliveryDecision,
  type EndpointHealthState,
} from './delivery-policy.js';
import {
  cancelWaitingDeliveries,
  healthState,
  recordFinished,
  type EngineEvent,
  type EngineEventSink,
  type FinishedDelivery,
  type HealthRow,
} from './delivery-records.js';
import type { ClaimedAttempt } from './dispatch.service.js';

/** The analytics facts of insertAttempts' attempts, in its placeholders. */
const ATTEMPT_FACTS = attemptFactsSql({
  teamIds: '$3::text[]',
  tenantIds: '$14::text[]',
  endpointIds: '$4::text[]',
  messageIds: '$15::text[]',
  startedAt: '$7::timestamptz[]',
});

/** What one attempt produced, as the worker hands it to settlement. */
export interface AttemptOutcome {
  attempt: ClaimedAttempt;
  result: AttemptResult;
  durationMs: number;
  /** Up to 4 KiB of the response body (kept only when the team logs response bodies). */
  responseBody: Buffer | null;
  /** 0 to 1: the share of the 20% jitter this retry gets. */
  jitter: number;
}

export interface SettlementDeps {
  db: DataSource;
  clock: Clock;
  jobs: JobQueue;
  events: EngineEventSink;
}

interface DeliveryStateRow {
  id: string;
  status: string;
  cancel_retries: boolean;
  response_body_logging: boolean;
}

/**
 * The settle side of the engine: a batch of attempt outcomes is written in one transaction: the attempt rows,
 * the deliveries' new states, the endpoints' health (circuit, failures), retry jobs, queue counters, endpoints
 * the service disables (410, private address) with their waiting deliveries canceled, and operational events.
 */
export class SettlementService {
  constructor(private readonly deps: SettlementDeps) {}

  async settle(outcomes: readonly AttemptOutcome[]): Promise<DeliveryDecision[]> {
    if (outcomes.length === 0) return [];
    const { db, clock } = this.deps;
    return retryOnConflict(() =>
      db.transaction(async (tx) => {
        const now = clock.now();
        const ids = outcomes.map((o) => o.attempt.deliveryId);
        // Health rows first, then deliveries, as the claim takes them (this transaction may also cancel other
        // deliveries of these endpoints).
        const endpointIds = [...new Set(outcomes.map((o) => o.attempt.endpointId))].sort();
        // The common case, every attempt a 2xx and none a probe, needs no locked read of health: a conditional
        // update at the end closes what needs closing (see markSuccesses). Otherwise the circuit rules run on
        // locked rows.
        const onlySuccesses = outcomes.every((o) => isSuccess(o.result) && o.attempt.trigger !== 'probe');
        const healthRows: HealthRow[] = onlySuccesses
          ? []
          : await tx.query(
              `SELECT endpoint_id, circuit, consecutive_failures, last_success_at, last_failure_at, next_probe_at,
                probe_wait_seconds, rate_tokens, rate_updated_at, 0 AS in_flight
           FROM endpoint_health WHERE endpoint_id = ANY($1::text[]) ORDER BY endpoint_id FOR UPDATE`,
              [endpointIds],
            );
        const states: DeliveryStateRow[] = await tx.query(
          `SELECT d.id, d.status, d.cancel_retries, coalesce(s.response_body_logging, false) AS response_body_logging
           FROM deliveries d LEFT JOIN team_settings s ON s.team_id = d.team_id
          WHERE d.id = ANY($1::text[]) ORDER BY d.id FOR UPDATE OF d`,
          [ids],
        );
        const stateOf = new Map(states.map((s) => [s.id, s]));
        const health = new Map<string, EndpointHealthState>(healthRows.map((r) => [r.endpoint_id, healthState(r)]));

        const decisions: DeliveryDecision[] = [];
        const updates: {
          id: string;
          status: string;
          next: Date | null;
          trigger: string | null;
          code: number | null;
          error: string | null;
        }[] = [];
        const retries: NewJob<{ delivery_id: string }>[] = [];
        const finished: FinishedDelivery[] = [];
        const events: EngineEvent[] = [];
        const disable = new Map<string, { reason: string; teamId: string; tenantId: string }>();

        for (const outcome of outcomes) {
          const { attempt, result } = outcome;
          const state = stateOf.get(attempt.deliveryId);
          // Settled already (a duplicate after a crash window), or finished meanwhile: only the attempt is kept.
          if (!state || state.status !== 'in_flight') {
            decisions.push({ status: 'failed', reason: 'already_settled', disableEndpoint: null });
            continue;
          }
          let decision = decideAfterAttempt({
            result,
            attemptCount: attempt.attemptNumber,
            retryDelaysSeconds: attempt.retryDelaysSeconds,
            expiresAt: attempt.expiresAt,
            now,
            jitter: outcome.jitter,
          });
          // Canceled while in flight: the attempt finished, its retries are canceled.
          if (decision.status === 'retry_wait' && state.cancel_retries)
            decision = { status: 'failed', reason: 'canceled', disableEndpoint: null };
          decisions.push(decision);
          const code = result.kind === 'response' ? result.status : null;
          const current = health.get(attempt.endpointId);
          if (current) {
            const change = healthAfterAttempt(current, isSuccess(result), attempt.trigger, now);
            health.set(attempt.endpointId, change.health);
            if (change.recovered)
              events.push({
                type: 'webhooks.endpoint.recovered',
                teamId: attempt.teamId,
                tenantId: attempt.tenantId,
                resourceId: attempt.endpointId,
                data: { endpoint_id: attempt.endpointId, failures_before: current.consecutiveFailures },
              });
          }
          const canceled = state.cancel_retries && decision.status === 'failed' && decision.reason === 'canceled';
          const status = canceled ? 'canceled' : decision.status;
          updates.push({
            id: attempt.deliveryId,
            status,
            next: decision.status === 'retry_wait' ? decision.nextAttemptAt : null,
            trigger: decision.status === 'retry_wait' ? 'retry' : null,
            code,
            error: decision.status === 'succeeded' ? null : describeResult(result),
          });
          if (decision.status === 'retry_wait')
            retries.push({ payload: { delivery_id: attempt.deliveryId }, startAfter: decision.nextAttemptAt });
          else
            finished.push({
              id: attempt.deliveryId,
              teamId: attempt.teamId,
              tenantId: attempt.tenantId,
              messageId: attempt.messageId,
              endpointId: attempt.endpointId,
              status: status as FinishedDelivery['status'],
              attempts: attempt.attemptNumber,
              lastStatusCode: code,
              reason: decision.status === 'succeeded' ? null : 'reason' in decision ? decision.reason : null,
            });
          if (decision.status === 'failed' && decision.disableEndpoint)
            disable.set(attempt.endpointId, {
              reason: decision.disableEndpoint,
              teamId: attempt.teamId,
              tenantId: attempt.tenantId,
            });
        }

        await this.insertAttempts(tx, outcomes, stateOf, now);
        await tx.query(
          `UPDATE deliveries d
            SET status = x.status, next_attempt_at = coalesce(x.next, d.next_attempt_at),
                next_trigger = coalesce(x.trigger, d.next_trigger), lease_expires_at = NULL,
                last_status_code = x.code, last_error = x.error, last_attempt_at = $7::timestamptz,
                updated_at = $7::timestamptz,
                finished_at = CASE WHEN x.status IN ('succeeded', 'failed', 'expired', 'canceled') THEN $7::timestamptz END
           FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::int[], $6::text[])
                AS x(id, status, next, trigger, code, error)
          WHERE d.id = x.id`,
          [
            updates.map((u) => u.id),
            updates.map((u) => u.status),
            updates.map((u) => u.next),
            updates.map((u) => u.trigger),
            updates.map((u) => u.code),
            updates.map((u) => u.error),
            now,
          ],
        );
        await this.writeHealth(tx, health);
        if (onlySuccesses) await this.markSuccesses(tx, endpointIds, outcomes, events, now);
        await this.disableEndpoints(tx, disable, events, now);
        await this.deps.jobs.send(tx, deliveryAttemptJob, retries);
        await recordFinished(tx, finished, this.deps.events);
        if (events.length > 0) await this.deps.events.emit(tx, events);
        return decisions;
      }),
    );
  }

  private async insertAttempts(
    tx: EntityManager,
    outcomes: readonly AttemptOutcome[],
    stateOf: Map<string, DeliveryStateRow>,
    now: Date,
  ): Promise<void> {
    const keepBody = (o: AttemptOutcome) =>
      stateOf.get(o.attempt.deliveryId)?.response_body_logging ? o.responseBody : null;
    await tx.query(
      `WITH facts AS (${ATTEMPT_FACTS})
       INSERT INTO attempts (id, delivery_id, team_id, endpoint_id, number, trigger, started_at, duration_ms,
                             url_revision, status_code, error_kind, response_body, created_at)
       SELECT * , $12::timestamptz FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[],
                                               $7::timestamptz[], $8::int[], $9::bigint[], $10::int[], $11::text[],
                                               $13::bytea[])
                AS x(id, delivery_id, team_id, endpoint_id, number, trigger, started_at, duration_ms, url_revision,
                     status_code, error_kind, response_body)`,
      [
        outcomes.map((o) => o.attempt.attemptId),
        outcomes.map((o) => o.attempt.deliveryId),
        outcomes.map((o) => o.attempt.teamId),
        outcomes.map((o) => o.attempt.endpointId),
        outcomes.map((o) => o.attempt.attemptNumber),
        outcomes.map((o) => o.attempt.trigger),
        outcomes.map((o) => o.attempt.startedAt),
        outcomes.map((o) => Math.round(o.durationMs)),
        outcomes.map((o) => o.attempt.urlRevision),
        outcomes.map((o) => (o.result.kind === 'response' ? o.result.status : null)),
        outcomes.map((o) => (o.result.kind === 'response' ? null : o.result.kind)),
        now,
        outcomes.map(keepBody),
        outcomes.map((o) => o.attempt.tenantId),
        outcomes.map((o) => o.attempt.messageId),
      ],
    );
  }

  /**
   * Successes close the circuit and clear the failure count. The row is written only when that changes something
   * or its last_success_at is over a second old, so a busy endpoint's health row is not rewritten (and locked) by
   * every settlement; a circuit that was not closed emits webhooks.endpoint.recovered.
   */
  private async markSuccesses(
    tx: EntityManager,
    endpointIds: string[],
    outcomes: readonly AttemptOutcome[],
    events: EngineEvent[],
    now: Date,
  ): Promise<void> {
    // Lock only the rows that change, in ID order like the claim (an unordered UPDATE deadlocked with claims).
    const changed: { endpoint_id: string; old_circuit: string; old_failures: number }[] = await tx.query(
      `SELECT endpoint_id, circuit AS old_circuit, consecutive_failures AS old_failures FROM endpoint_health
        WHERE endpoint_id = ANY($1::text[])
          AND (circuit <> 'closed' OR consecutive_failures <> 0 OR last_success_at IS NULL OR last_success_at < $2)
        ORDER BY endpoint_id
          FOR UPDATE`,
      [endpointIds, new Date(now.getTime() - 1000)],
    );
    if (changed.length === 0) return;
    await tx.query(
      `UPDATE endpoint_health
          SET circuit = 'closed', consecutive_failures = 0, last_success_at = $2, next_probe_at = NULL,
              probe_wait_seconds = $3
        WHERE endpoint_id = ANY($1::text[])`,
      [changed.map((row) => row.endpoint_id), now, FIRST_PROBE_WAIT_SECONDS],
    );
    for (const row of changed) {
      if (row.old_circuit === 'closed') continue;
      const attempt = outcomes.find((o) => o.attempt.endpointId === row.endpoint_id)!.attempt;
      events.push({
        type: 'webhooks.endpoint.recovered',
        teamId: attempt.teamId,
        tenantId: attempt.tenantId,
        resourceId: row.endpoint_id,
        data: { endpoint_id: row.endpoint_id, failures_before: row.old_failures },
      });
    }
  }

  private async writeHealth(tx: EntityManager, health: Map<string, EndpointHealthState>): Promise<void> {
    const entries = [...health.entries()];
    if (entries.length === 0) return;
    await tx.query(
      `UPDATE endpoint_health h
          SET circuit = x.circuit, consecutive_failures = x.failures, last_success_at = x.success,
              last_failure_at = x.failure, next_probe_at = x.probe, probe_wait_seconds = x.wait
         FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[], $7::int[])
              AS x(endpoint_id, circuit, failures, success, failure, probe, wait)
        WHERE h.endpoint_id = x.endpoint_id`,
      [
        entries.map(([id]) => id),
        entries.map(([, h]) => h.circuit),
        entries.map(([, h]) => h.consecutiveFailures),
        entries.map(([, h]) => h.lastSuccessAt),
        entries.map(([, h]) => h.lastFailureAt),
        entries.map(([, h]) => h.nextProbeAt),
        entries.map(([, h]) => h.probeWaitSeconds),
      ],
    );
  }

  /**
   * 410 Gone or a destination resolving to a private address: the service disables the endpoint (reason
   * endpoint_gone or unsafe_destination), cancels its waiting deliveries and emits webhooks.endpoint.disabled.
   */
  private async disableEndpoints(
    tx: EntityManager,
    disable: Map<string, { reason: string; teamId: string; tenantId: string }>,
    events: EngineEvent[],
    now: Date,
  ): Promise<void> {
    if (disable.size === 0) return;
    const ids = [...disable.keys()];
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
    await cancelWaitingDeliveries(tx, { endpointIds: ids }, 'endpoint_disabled', now);
  }
}
