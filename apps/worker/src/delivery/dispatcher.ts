import type { SpanContext } from '@opentelemetry/api';
import type { Logger } from 'pino';
import {
  CLOSED_CIRCUIT,
  errorReason,
  markFailed,
  LEASE_MARGIN_MS,
  partitionOf,
  type AttemptOutcome,
  type ClaimedAttempt,
  type EndpointHealthState,
  type LaneRequest,
  type LaneState,
  type Services,
  type SettledOutcome,
  type SettlementResult,
} from '@svc/core';
import { Coalescer } from './coalescer.js';
import {
  endClaimSpan,
  endJobSpan,
  sendTraced,
  settleBatchTraced,
  settleTraced,
  startClaimSpan,
  startJobSpan,
  type PendingSettle,
} from './delivery-tracing.js';

export interface DispatcherOptions {
  services: Services;
  workerId: string;
  logger: Logger;
  /** The deployment-wide limits; this worker enforces its share of them (the limit over the live workers). */
  limits: { serviceConcurrency: number; dispatchRate: number };
  /** Sends one attempt (signs, POSTs, classifies); never throws. */
  send(attempt: ClaimedAttempt): Promise<AttemptOutcome>;
  /** Told about each settled attempt (metrics). */
  onSettled?(outcome: AttemptOutcome, settled: SettledOutcome): void;
  heartbeatMs?: number;
  /** How often owned partitions are searched for endpoints with work (a backstop for lost wake-ups). */
  discoveryMs?: number;
  /** How often expiry and the release of dead workers' leases run. */
  housekeepingMs?: number;
}

/** Most endpoints in one claim statement. */
const MAX_CLAIM_ENDPOINTS = 500;
/** Most attempts asked of one endpoint in one claim when nothing is known of it yet. */
const UNKNOWN_CONCURRENCY = 1;
/** A lane whose claim came back short for a reason memory cannot see (a row locked, a foreign lease) looks again. */
const SHORT_CLAIM_RECHECK_MS = 250;
/** A parked lane (paused endpoint) is read again this often even without a wake-up. */
const PARKED_RECHECK_MS = 10_000;
/** Claims (and settlement batches) start at most this often: under load, batches grow instead of their number. */
const MIN_BATCH_GAP_MS = 2;
/** After a connection error, claims wait this long (the lanes keep their state). */
const UNAVAILABLE_RECHECK_MS = 1000;
/** The longest a lane whose claims keep failing on its own waits before it is tried again. */
const MAX_LANE_BACKOFF_MS = 30_000;
/** The longest a timer waits: the service clock may move (tests), so due times are compared at least this often. */
const MAX_SLEEP_MS = 1000;

/** One endpoint this worker owns, with what it knows of it. */
class Lane {
  /** The earliest time (service clock, ms) a row of this endpoint may be due; Infinity when none is known. */
  nextDueAt = 0;
  inFlight = 0;
  /** Attempts of other workers still holding rows of this endpoint (a handoff), as the last claim saw them. */
  foreignInFlight = 0;
  tokens = 1;
  refilledAt = 0;
  ratePerSecond: number | null = null;
  maxConcurrency: number | null = null;
  health: EndpointHealthState = CLOSED_CIRCUIT;
  /** Moves with every settlement that sets `health`: a claim that read the row before it must not undo it. */
  healthEpoch = 0;
  /** A paused endpoint (real time, ms): nothing is claimed until a wake-up or this recheck. */
  parkedUntil = 0;
  /** Not before this real time (ms): after a short claim or a failed one. */
  notBefore = 0;
  claimFailures = 0;
  claiming = false;
  /** Due times learnt while a claim ran (a wake-up, a retry): the claim's older snapshot must not hide them. */
  dueWhileClaiming = Infinity;

  constructor(readonly id: string) {}

  /** Something of this endpoint is due at `at` (or earlier). */
  lower(at: number): void {
    this.nextDueAt = Math.min(this.nextDueAt, at);
    if (this.claiming) this.dueWhileClaiming = Math.min(this.dueWhileClaiming, at);
  }

  /** Rate tokens accrue in real time (a rate is per second of the wall clock, whatever the service clock says). */
  refill(realNow: number): void {
    const rate = this.ratePerSecond ?? 1;
    this.tokens = Math.min(rate, this.tokens + (Math.max(0, realNow - this.refilledAt) / 1000) * rate);
    this.refilledAt = realNow;
  }

  /** Milliseconds of real time until a rate token is there. */
  tokenWaitMs(): number {
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / (this.ratePerSecond ?? 1)) * 1000);
  }

  /**
   * When (service clock) this lane could start an attempt, ignoring capacity and rate tokens (Infinity: only a
   * wake-up or a settle helps).
   */
  eligibleAt(): number {
    let at = this.nextDueAt;
    if (this.health.circuit !== 'closed' && this.health.nextProbeAt)
      at = Math.max(at, this.health.nextProbeAt.getTime());
    return at;
  }

  free(): number {
    const max = this.maxConcurrency ?? UNKNOWN_CONCURRENCY;
    if (this.health.circuit !== 'closed') return this.inFlight + this.foreignInFlight === 0 ? 1 : 0;
    return Math.max(0, max - this.inFlight - this.foreignInFlight);
  }
}

/**
 * The delivery engine of one worker process (docs/delivery.md, "The engine"). It owns whole partitions of the
 * endpoints (a heartbeat renews the leases), keeps each owned endpoint with work as a lane in memory, and claims
 * due rows for every lane with room in one statement per batch: concurrency, rate and circuit timing are decided
 * here, so a busy, slow or failing endpoint costs nothing while it waits and never delays another. Attempts settle
 * in batches (one statement each); a failed batch settles its outcomes one by one.
 */
export class Dispatcher {
  private readonly lanes = new Map<string, Lane>();
  private partitions = new Set<number>();
  private liveWorkers = 1;
  private running = 0;
  private globalTokens = 0;
  private globalRefilledAt = 0;
  private stopping = false;
  private claimRunning = false;
  /** After a connection error: no claim before this real time. */
  private unavailableUntil = 0;
  private tickQueued = false;
  private timer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private lastDiscovery = 0;
  private lastHousekeeping = 0;
  private lastClaimAt = 0;
  private beating = false;
  private idleWaiters: (() => void)[] = [];
  private readonly settles: Coalescer<PendingSettle, SettledOutcome>;

  constructor(private readonly options: DispatcherOptions) {
    this.settles = new Coalescer((pending) => this.settleBatch(pending), {
      maxConcurrent: 2,
      maxBatch: 500,
      minGapMs: MIN_BATCH_GAP_MS,
      // An endpoint's circuit counts consecutive failures from what the previous settlement decided: two batches
      // of one endpoint at once would each start from the same count and one would lose the other's failures.
      keyOf: (pending) => pending.outcome.attempt.endpointId,
    });
  }

  async start(): Promise<void> {
    await this.heartbeat();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.options.heartbeatMs ?? 1000);
    this.heartbeatTimer.unref();
  }

  /** Work became due at these endpoints (a NOTIFY); null: anywhere (a discovery pass). */
  wake(endpointIds: readonly string[] | null): void {
    if (this.stopping) return;
    if (endpointIds === null) {
      this.lastDiscovery = 0;
      void this.discover([...this.partitions]);
      return;
    }
    const now = this.now();
    for (const id of endpointIds) {
      if (!this.partitions.has(partitionOf(id))) continue;
      const lane = this.lane(id);
      lane.lower(now);
      lane.parkedUntil = 0;
      lane.notBefore = 0;
      // The probe time may have moved (retry_now, resume): let the next claim read the circuit again.
      if (lane.health.circuit !== 'closed') lane.health = { ...lane.health, nextProbeAt: null };
    }
    this.schedule();
  }

  /** Attempts running in this process. */
  get inFlight(): number {
    return this.running;
  }

  /** Stops claiming, lets running attempts finish and settle, and gives up the partitions at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    while (this.claimRunning || this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.options.services.ownership.leave(this.options.workerId).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'leaving the dispatch partitions failed');
    });
  }

  private now(): number {
    return this.options.services.clock.now().getTime();
  }

  private lane(id: string): Lane {
    let lane = this.lanes.get(id);
    if (!lane) {
      lane = new Lane(id);
      lane.refilledAt = Date.now();
      this.lanes.set(id, lane);
    }
    return lane;
  }

  private async heartbeat(): Promise<void> {
    if (this.stopping || this.beating) return;
    this.beating = true;
    const { services, workerId, logger } = this.options;
    try {
      const membership = await services.ownership.heartbeat(workerId);
      const before = this.partitions;
      this.partitions = new Set(membership.partitions);
      this.liveWorkers = Math.max(1, membership.liveWorkers);
      for (const [id, lane] of this.lanes)
        if (!this.partitions.has(partitionOf(id)) && lane.inFlight === 0 && !lane.claiming) this.lanes.delete(id);
      const gained = membership.partitions.filter((p) => !before.has(p));
      const now = Date.now();
      if (gained.length > 0) await this.discover(gained);
      else if (now - this.lastDiscovery >= (this.options.discoveryMs ?? 10_000)) {
        this.lastDiscovery = now;
        for (const lane of this.lanes.values()) lane.parkedUntil = Math.min(lane.parkedUntil, 0);
        await this.discover([...this.partitions]);
      }
      if (now - this.lastHousekeeping >= (this.options.housekeepingMs ?? 2000)) {
        this.lastHousekeeping = now;
        await services.ownership.releaseOrphans();
        await services.ownership.expireDue();
      }
    } catch (error) {
      if (!this.stopping) logger.error({ err: error }, 'dispatch heartbeat failed');
    } finally {
      this.beating = false;
    }
    this.schedule();
  }

  private async discover(partitions: number[]): Promise<void> {
    if (partitions.length === 0) return;
    try {
      const found = await this.options.services.ownership.discover(partitions);
      for (const { endpointId, nextDueAt } of found) {
        this.lane(endpointId).lower(nextDueAt.getTime());
      }
    } catch (error) {
      if (!this.stopping) this.options.logger.error({ err: error }, 'dispatch discovery failed');
    }
    this.schedule();
  }

  /** Runs a tick soon: at once when one is due, else when the earliest lane becomes eligible. */
  private schedule(): void {
    if (this.stopping || this.tickQueued) return;
    this.tickQueued = true;
    const wait = Math.max(0, this.lastClaimAt + MIN_BATCH_GAP_MS - Date.now());
    const run = () => {
      this.tickQueued = false;
      void this.tick();
    };
    if (wait > 0) setTimeout(run, wait);
    else setImmediate(run);
  }

  /** This worker's share of the deployment-wide limits: attempts running, and a rate bucket in real time. */
  private globalFree(realNow: number): number {
    const { serviceConcurrency, dispatchRate } = this.options.limits;
    const concurrencyShare = Math.max(1, Math.ceil(serviceConcurrency / this.liveWorkers));
    const rateShare = Math.max(1, dispatchRate / this.liveWorkers);
    this.globalTokens = Math.min(
      rateShare,
      this.globalTokens + (Math.max(0, realNow - this.globalRefilledAt) / 1000) * rateShare,
    );
    this.globalRefilledAt = realNow;
    return Math.max(0, Math.min(concurrencyShare - this.running, Math.floor(this.globalTokens)));
  }

  private async tick(): Promise<void> {
    if (this.stopping || this.claimRunning) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const unavailableMs = this.unavailableUntil - Date.now();
    if (unavailableMs > 0) {
      this.timer = setTimeout(() => void this.tick(), unavailableMs);
      return;
    }
    const now = this.now();
    const realNow = Date.now();
    let budget = this.globalFree(realNow);
    const requests: LaneRequest[] = [];
    // Real milliseconds to sleep: until the earliest lane is due (service clock) or has a rate token (real time).
    let sleepMs = Infinity;
    for (const lane of this.lanes.values()) {
      if (lane.claiming) continue;
      lane.refill(realNow);
      const at = lane.eligibleAt();
      let free = lane.free();
      if (free === 0) {
        // A settle of this lane ticks again. Other workers' leases (a handoff, a dead worker) end with no settle
        // here: such a lane asks again now and then, and the claim applies the rule with what is live.
        if (lane.foreignInFlight === 0 || lane.inFlight >= (lane.maxConcurrency ?? UNKNOWN_CONCURRENCY)) continue;
        free = 1;
      }
      if (at > now) {
        sleepMs = Math.min(sleepMs, at - now);
        continue;
      }
      const held = Math.max(lane.notBefore, lane.parkedUntil);
      if (held > realNow) {
        sleepMs = Math.min(sleepMs, held - realNow);
        continue;
      }
      if (lane.tokens < 1) {
        sleepMs = Math.min(sleepMs, lane.tokenWaitMs());
        continue;
      }
      if (budget <= 0 || requests.length >= MAX_CLAIM_ENDPOINTS) {
        sleepMs = Math.min(sleepMs, budget <= 0 ? 5 : 0);
        continue;
      }
      const want = Math.min(free, Math.floor(lane.tokens), budget);
      if (want <= 0) continue;
      budget -= want;
      lane.claiming = true;
      requests.push({ endpointId: lane.id, want, mine: lane.inFlight });
    }
    if (requests.length > 0) {
      this.claimRunning = true;
      this.lastClaimAt = Date.now();
      await this.claim(requests);
      this.claimRunning = false;
      this.notifyIdle();
      this.schedule();
      return;
    }
    if (!this.stopping) this.timer = setTimeout(() => void this.tick(), Math.min(MAX_SLEEP_MS, Math.max(1, sleepMs)));
  }

  private async claim(requests: LaneRequest[]): Promise<void> {
    const { services, workerId, logger } = this.options;
    const epochs = new Map(requests.map((r) => [r.endpointId, this.lanes.get(r.endpointId)?.healthEpoch ?? 0]));
    const span = startClaimSpan(workerId, requests.length);
    let result;
    try {
      result = await services.dispatch.claim(workerId, requests);
    } catch (error) {
      markFailed(span, errorReason(error));
      span.end();
      if (isConnectionError(error)) {
        // Postgres is away (a restart, a network cut): nothing is any lane's fault. Every lane looks again in a
        // second, and none is held back once the database is there again.
        for (const request of requests) {
          const lane = this.lanes.get(request.endpointId);
          if (lane) lane.claiming = false;
        }
        this.unavailableUntil = Date.now() + UNAVAILABLE_RECHECK_MS;
        if (!this.stopping) logger.warn({ err: error }, 'claiming deliveries failed: the database is unavailable');
        return;
      }
      // One bad endpoint must not hold back the others: a failed batch is retried lane by lane, and a lane that
      // fails alone backs off (its rows stay queued; reconciliation and expiry still reach them).
      if (requests.length > 1) {
        for (const request of requests) await this.claim([request]);
        return;
      }
      const lane = this.lanes.get(requests[0]!.endpointId);
      if (lane) {
        lane.claiming = false;
        lane.claimFailures += 1;
        lane.notBefore = Date.now() + Math.min(MAX_LANE_BACKOFF_MS, 500 * 2 ** Math.min(6, lane.claimFailures));
      }
      logger.error({ err: error, endpoint_id: requests[0]!.endpointId }, 'claiming deliveries failed');
      return;
    }
    endClaimSpan(span, result);
    const now = this.now();
    this.globalTokens -= result.attempts.length;
    const claimedPer = new Map<string, number>();
    for (const attempt of result.attempts)
      claimedPer.set(attempt.endpointId, (claimedPer.get(attempt.endpointId) ?? 0) + 1);
    const finishedPer = new Map<string, number>();
    for (const f of result.finished) finishedPer.set(f.endpointId, (finishedPer.get(f.endpointId) ?? 0) + 1);
    const states = new Map(result.lanes.map((state) => [state.endpointId, state]));
    for (const request of requests) {
      const lane = this.lanes.get(request.endpointId);
      if (!lane) continue;
      lane.claiming = false;
      lane.claimFailures = 0;
      const state = states.get(request.endpointId);
      if (!state) {
        // Not this worker's any more (its partition moved) or the endpoint row is gone: nothing to claim here.
        if (lane.inFlight === 0) this.lanes.delete(lane.id);
        continue;
      }
      this.apply(lane, state, epochs.get(lane.id) ?? lane.healthEpoch);
      const claimed = claimedPer.get(lane.id) ?? 0;
      lane.inFlight += claimed;
      lane.tokens -= claimed;
      const progressed = claimed + (finishedPer.get(lane.id) ?? 0);
      // Short although the claim itself saw more rows due (a row locked by another transaction, a foreign lease):
      // look again a little later rather than at once. Rows that arrived during the claim (a wake-up) are not a
      // reason to wait: they are claimed on the next tick.
      const stillDue = state.nextDueAt !== null && state.nextDueAt.getTime() <= now;
      if (progressed < request.want && stillDue && state.status === 'enabled' && (lane.free() > 0 || progressed === 0))
        lane.notBefore = Date.now() + SHORT_CLAIM_RECHECK_MS;
      if (lane.nextDueAt === Infinity && lane.inFlight === 0) this.lanes.delete(lane.id);
    }
    for (const attempt of result.attempts) void this.run(attempt, span.spanContext());
  }

  /**
   * What the claim read of an endpoint replaces what memory had (Postgres is the authority), except a circuit that a
   * settlement set while the claim ran (`epoch` is the lane's when the claim started): that one is newer than the
   * row the claim read.
   */
  private apply(lane: Lane, state: LaneState, epoch: number): void {
    lane.maxConcurrency = state.maxConcurrency;
    if (lane.ratePerSecond !== state.ratePerSecond) {
      lane.ratePerSecond = state.ratePerSecond;
      lane.tokens = Math.min(lane.tokens, state.ratePerSecond);
    }
    if (lane.healthEpoch === epoch) lane.health = state.health;
    lane.foreignInFlight = state.foreignInFlight;
    lane.nextDueAt = Math.min(state.nextDueAt ? state.nextDueAt.getTime() : Infinity, lane.dueWhileClaiming);
    lane.dueWhileClaiming = Infinity;
    lane.parkedUntil = state.status === 'paused' && !state.deleted ? Date.now() + PARKED_RECHECK_MS : 0;
  }

  /** One claimed attempt: send, then settle; traced as a job of the message's trace (delivery-tracing.ts). */
  private async run(attempt: ClaimedAttempt, claim: SpanContext): Promise<void> {
    this.running += 1;
    const { services, logger } = this.options;
    services.metrics.poolInUse.set(this.running);
    const job = startJobSpan(attempt, claim, this.options.workerId);
    let outcome: AttemptOutcome | null = null;
    try {
      outcome = await sendTraced(attempt, job.context, this.options.send);
      const settled = await settleTraced(outcome, job.context, (pending) => this.settles.submit(pending));
      this.options.onSettled?.(outcome, settled);
    } catch (error) {
      markFailed(job.span, errorReason(error));
      // Its row stays leased to this worker until the lease ends; then it is due again (same webhook-id).
      logger.error({ err: error, delivery_id: attempt.deliveryId }, 'settling an attempt failed');
      this.lanes.get(attempt.endpointId)?.lower(attempt.startedAt.getTime() + attempt.timeoutMs + LEASE_MARGIN_MS);
    } finally {
      endJobSpan(job.span, outcome);
      this.running -= 1;
      services.metrics.poolInUse.set(this.running);
      const lane = this.lanes.get(attempt.endpointId);
      if (lane) {
        lane.inFlight -= 1;
        const idle = lane.inFlight === 0 && !lane.claiming;
        if (idle && (lane.nextDueAt === Infinity || !this.partitions.has(partitionOf(lane.id))))
          this.lanes.delete(lane.id);
      }
      this.notifyIdle();
      this.schedule();
    }
  }

  private settleBatch(pending: PendingSettle[]): Promise<SettledOutcome[]> {
    return settleBatchTraced(pending, async (span) => {
      const { services, workerId } = this.options;
      const healthOf = (id: string) => this.lanes.get(id)?.health ?? CLOSED_CIRCUIT;
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

  /** What memory learns from a settled batch: the circuits as written, and the lanes' next due times. */
  private applySettlement(outcomes: AttemptOutcome[], result: SettlementResult): SettledOutcome[] {
    for (const [id, health] of result.health) {
      const lane = this.lanes.get(id);
      if (lane) {
        lane.health = health;
        lane.healthEpoch += 1;
      }
    }
    outcomes.forEach((outcome, i) => {
      const decision = result.outcomes[i]!.decision;
      const lane = this.lanes.get(outcome.attempt.endpointId);
      if (lane && decision.status === 'retry_wait') lane.lower(decision.nextAttemptAt.getTime());
    });
    return result.outcomes;
  }

  private notifyIdle(): void {
    if (this.claimRunning || this.running > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * A failure of the connection rather than of the statement: node-postgres' own connection errors (no SQLSTATE: a
 * connection terminated, a client no longer queryable, a connect timeout), socket errors
 * (ECONNREFUSED, ECONNRESET, ...), and the SQLSTATE classes 08 (connection exception), 57P (operator intervention:
 * shutdown, cannot connect now) and 53 (insufficient resources: too many connections).
 */
function isConnectionError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return /^(08|57P|53)/.test(code) || /^E[A-Z]+$/.test(code);
  return typeof message === 'string' && /connect|terminated|not queryable|socket|closed/i.test(message);
}
