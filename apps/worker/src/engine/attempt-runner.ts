import type { SpanContext } from '@opentelemetry/api';
import type { Logger } from 'pino';
import {
  CLOSED_CIRCUIT,
  errorReason,
  markFailed,
  LEASE_MARGIN_MS,
  isSuccess,
  type AttemptOutcome,
  type ClaimedAttempt,
  type ClaimOptions,
  type ClaimResult,
  type LaneRequest,
  type Services,
  type SettledOutcome,
  type SettledRow,
  type SettlementResult,
} from '@svc/core';
import { KeyedBatcher } from './keyed-batcher.js';
import {
  endJobSpan,
  sendTraced,
  settleBatchTraced,
  settleTraced,
  startJobSpan,
  type PendingSettle,
} from './delivery-tracing.js';
import type { SharedSpeeds } from './endpoint-speeds.js';
import type { Lane } from './lane.js';

/** What the runner needs of the dispatcher that owns the lanes. */
export interface AttemptHost {
  /** The lane of an endpoint this worker still keeps in memory. */
  laneOf(endpointId: string): Lane | undefined;
  /** Something of the lane is due at `at` (service clock): the next tick looks at it. */
  lower(lane: Lane, at: number): void;
  /** The service clock, in ms. */
  now(): number;
  /** An attempt began: the dispatcher counts it (slots, metrics). */
  attemptStarted(): void;
  /** An attempt ended, settled or not: the dispatcher frees its slot and looks at its lane again. */
  attemptEnded(attempt: ClaimedAttempt, startedAt: number): void;
  isStopping(): boolean;
  /**
   * For a success of an ordered endpoint's head: the claim of the endpoint's next delivery, made in the same round
   * trip as the head's settlement, when the dispatcher would give it the slot now anyway; null: the settlement goes
   * in a batch and the next claim comes on a tick.
   */
  claimAlong(attempt: ClaimedAttempt): ClaimAlong | null;
}

/** A claim made with a settlement (AttemptHost.claimAlong). */
export interface ClaimAlong {
  requests: LaneRequest[];
  options: ClaimOptions;
  /** Called once: with the claim, or with null when it was not made (the settlement failed or took its own way). */
  done(claim: ClaimResult | null, error?: unknown): void;
}

export interface AttemptRunnerOptions {
  services: Services;
  workerId: string;
  logger: Logger;
  /** Sends one attempt (signs, POSTs, classifies); never throws. */
  send(attempt: ClaimedAttempt): Promise<AttemptOutcome>;
  /** Told about each settled attempt (metrics). */
  onSettled?(outcome: AttemptOutcome, settled: SettledOutcome): void;
  speeds: SharedSpeeds;
  /** Claims (and settlement batches) start at most this often. */
  minBatchGapMs: number;
}

/**
 * The life of one claimed attempt in a worker (docs/delivery.md, "The engine"): send it, settle its outcome in a
 * batch with others (one statement for many attempts), and tell the lanes what the settlement decided (circuits,
 * retry times, endpoints disabled). The dispatcher decides what to claim; this runs what it claimed.
 */
export class AttemptRunner {
  private readonly settles: KeyedBatcher<PendingSettle, SettledOutcome>;

  constructor(
    private readonly host: AttemptHost,
    private readonly options: AttemptRunnerOptions,
  ) {
    this.settles = new KeyedBatcher((pending) => this.settleBatch(pending), {
      maxConcurrent: 2,
      maxBatch: 500,
      minGapMs: options.minBatchGapMs,
      // An endpoint's circuit counts consecutive failures from what the previous settlement decided: two batches
      // of one endpoint at once would each start from the same count and one would lose the other's failures.
      keyOf: (pending) => pending.outcome.attempt.endpointId,
      // An ordered endpoint sends its next delivery only once its head has settled: nothing to gain by waiting.
      urgent: (pending) => pending.outcome.attempt.sequence !== null,
    });
  }

  /** One claimed attempt: send, then settle; traced as a job of the message's trace (delivery-tracing.ts). */
  async run(attempt: ClaimedAttempt, startedAt: number, claim: SpanContext): Promise<void> {
    const { logger, workerId } = this.options;
    this.host.attemptStarted();
    const job = startJobSpan(attempt, claim, workerId);
    let outcome: AttemptOutcome | null = null;
    try {
      outcome = await sendTraced(attempt, job.context, this.options.send);
      this.options.speeds.record(attempt.endpointId, outcome.durationMs);
      const settled = await settleTraced(outcome, job.context, (pending) => this.settle(pending));
      this.options.onSettled?.(outcome, settled);
    } catch (error) {
      markFailed(job.span, errorReason(error));
      // Its row stays leased to this worker until the lease ends; then it is due again (same webhook-id).
      logger.error({ err: error, delivery_id: attempt.deliveryId }, 'settling an attempt failed');
      const lane = this.host.laneOf(attempt.endpointId);
      if (lane) this.host.lower(lane, attempt.startedAt.getTime() + attempt.timeoutMs + LEASE_MARGIN_MS);
    } finally {
      endJobSpan(job.span, outcome);
      this.host.attemptEnded(attempt, startedAt);
    }
  }

  /** An outcome's settlement: in a batch, or with its ordered endpoint's next claim (AttemptHost.claimAlong). */
  private settle(pending: PendingSettle): Promise<SettledOutcome> {
    const { attempt, result } = pending.outcome;
    const along = attempt.sequence !== null && isSuccess(result) ? this.host.claimAlong(attempt) : null;
    return along ? this.settleWithClaim(pending, along) : this.settles.submit(pending);
  }

  /**
   * An ordered endpoint's head settled and its next delivery claimed in one round trip (DispatchService.settleAndClaim):
   * the head's settlement then the claim, in one transaction. A settlement that needs its own transaction (events)
   * does not call the runner: then no claim is made here, and the next tick makes it. When the transaction fails
   * (nothing of it is written), the outcome is settled on its own, in a batch: a claim that fails must never keep a
   * head that was delivered from settling (it would be sent again once its lease ends).
   */
  private async settleWithClaim(pending: PendingSettle, along: ClaimAlong): Promise<SettledOutcome> {
    const { services, workerId } = this.options;
    const healthOf = (id: string) => this.host.laneOf(id)?.health ?? CLOSED_CIRCUIT;
    const settled = await settleBatchTraced([pending], async (span) => {
      let claim: ClaimResult | null = null;
      let result: SettlementResult;
      try {
        result = await services.settlement.settle(workerId, [pending.outcome], healthOf, async (statement, params) => {
          const both = await services.dispatch.settleAndClaim(
            workerId,
            { statement, params },
            along.requests,
            along.options,
          );
          claim = both.claim;
          return both.settleRows as SettledRow[];
        });
      } catch (error) {
        markFailed(span, errorReason(error));
        along.done(null, error);
        return null;
      }
      const [one] = this.applySettlement([pending.outcome], result);
      along.done(claim);
      return one!;
    });
    return settled ?? this.settles.submit(pending);
  }

  private settleBatch(pending: PendingSettle[]): Promise<SettledOutcome[]> {
    return settleBatchTraced(pending, async (span) => {
      const { services, workerId } = this.options;
      const healthOf = (id: string) => this.host.laneOf(id)?.health ?? CLOSED_CIRCUIT;
      const outcomes = pending.map((p) => p.outcome);
      let result;
      try {
        result = await services.settlement.settle(workerId, outcomes, healthOf);
      } catch (error) {
        markFailed(span, errorReason(error));
        if (pending.length === 1) throw error;
        // Each outcome is independent of its neighbours: settle them one by one, so one bad row costs one retry.
        const settled: SettledOutcome[] = [];
        for (const one of pending) settled.push(...(await this.settleBatch([one])));
        return settled;
      }
      return this.applySettlement(outcomes, result);
    });
  }

  /**
   * What memory learns from a settled batch: the circuits as written, and the lanes' next due times. Endpoints the
   * batch disabled get their backlogs canceled in bounded batches beside the engine, not in its settlement slots.
   */
  private applySettlement(outcomes: AttemptOutcome[], result: SettlementResult): SettledOutcome[] {
    if (result.disabled.length > 0)
      void this.options.services.ownership.cancelDisabledBacklogs(result.disabled).catch((error: unknown) => {
        // The reconciliation sweep cancels what is left.
        if (!this.host.isStopping())
          this.options.logger.error({ err: error }, 'canceling a disabled endpoint’s backlog failed');
      });
    for (const [id, health] of result.health) {
      const lane = this.host.laneOf(id);
      if (lane) {
        lane.health = health;
        lane.healthEpoch += 1;
      }
    }
    // Circuits another writer moved since this worker read them (a resume, retry_now, a handoff): nothing of them
    // was written; the lane claims again soon, and the claim (which applies the stored circuit) reads them anew.
    for (const id of result.stale) {
      const lane = this.host.laneOf(id);
      if (!lane) continue;
      lane.health = { ...lane.health, nextProbeAt: null, version: undefined };
      lane.healthEpoch += 1;
      this.host.lower(lane, this.host.now());
    }
    outcomes.forEach((outcome, i) => {
      const decision = result.outcomes[i]!.decision;
      const lane = this.host.laneOf(outcome.attempt.endpointId);
      if (lane && decision.status === 'retry_wait') this.host.lower(lane, decision.nextAttemptAt.getTime());
    });
    return result.outcomes;
  }
}
