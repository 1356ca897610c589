import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import {
  errorReason,
  markFailed,
  partitionOf,
  type AttemptOutcome,
  type ClaimedAttempt,
  type ClaimResult,
  type LaneRequest,
  type Services,
  type SettledOutcome,
  type SlotClaim,
  type WakeTarget,
} from '@svc/core';
import FlatQueue from 'flatqueue';
import { AttemptRunner, type AttemptHost, type ClaimAlong } from './attempt-runner.js';
import { endClaimSpan, startClaimSpan } from './delivery-tracing.js';
import { planSlots, type SlotCandidate } from './fair-share.js';
import { SharedSpeeds } from './endpoint-speeds.js';
import { Lane, UNKNOWN_CONCURRENCY } from './lane.js';
import { Membership } from './membership.js';
import { SlotAccount, type SlotReport } from './slot-account.js';

export interface DispatcherOptions {
  services: Services;
  workerId: string;
  logger: Logger;
  /** The deployment-wide limits: service_concurrency is shared exactly through the slot rows, dispatch_rate per worker. */
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
/** A lane whose claim came back short for a reason memory cannot see (a row locked, a foreign lease) looks again. */
const SHORT_CLAIM_RECHECK_MS = 250;
/** Claims (and settlement batches) start at most this often: under load, batches grow instead of their number. */
const MIN_BATCH_GAP_MS = 2;
/** After a connection error, claims wait this long (the lanes keep their state). */
const UNAVAILABLE_RECHECK_MS = 1000;
/** The longest a lane whose claims keep failing on its own waits before it is tried again. */
const MAX_LANE_BACKOFF_MS = 30_000;
/** The longest a timer waits: the service clock may move (tests), so due times are compared at least this often. */
const MAX_SLEEP_MS = 1000;

/**
 * The slots of service_concurrency that slow lanes may never take (docs/delivery.md, "Fairness"): a third, at least
 * one, so slow receivers cannot hold every slot while others wait. A lane of unknown speed leaves one free.
 */
export function reservedSlots(serviceConcurrency: number): number {
  return serviceConcurrency <= 1 ? 0 : Math.max(1, Math.floor(serviceConcurrency / 3));
}

/** The slots a lane must leave free: none when known fast, one when of unknown speed, the reserve when slow. */
function headroomFor(speed: 'fast' | 'slow' | 'unknown', reserve: number): number {
  return speed === 'fast' ? 0 : speed === 'unknown' ? Math.min(1, reserve) : reserve;
}

/**
 * The delivery engine of one worker process (docs/delivery.md, "The engine"). It owns whole partitions of the
 * endpoints (membership.ts), keeps each owned endpoint with work as a lane in memory, and claims due rows for the
 * lanes with room in one statement per batch. Concurrency, rate and circuit timing per endpoint are decided here;
 * the deployment's slots (service_concurrency, across every worker) are planned fairly here (fair-share.ts) and
 * counted exactly by the claim. Attempts settle in batches; a failed batch settles its outcomes one by one.
 */
export class Dispatcher {
  private readonly lanes = new Map<string, Lane>();
  /**
   * The lanes the next tick looks at: whatever may let a lane start an attempt (a wake-up, a settle, a claim's
   * answer, a retry's due time) puts it here, and a tick drops a lane that cannot start one now. A tick's cost follows
   * the lanes with something to do, not every lane with work somewhere in the future.
   */
  private readonly ready = new Set<Lane>();
  /** Lanes that can start an attempt from a known real time on (a due row, a probe, a rate token, a recheck). */
  private readonly later = new FlatQueue<Lane>();
  /** Attempts running here per team (fairness is across teams first). */
  private readonly teamRunning = new Map<string, number>();
  /** The last look at every lane (the service clock may move without a timer: tests). */
  private lastSweepAt = 0;
  private readonly speeds: SharedSpeeds;
  private readonly membership: Membership;
  private partitions: ReadonlySet<number> = new Set();
  private liveWorkers = 1;
  private running = 0;
  /** The deployment's slots as this worker knows them, and its share of dispatch_rate. */
  private readonly slots: SlotAccount;
  private stopping = false;
  private claimRunning = false;
  /** After a connection error: no claim before this real time. */
  private unavailableUntil = 0;
  private tickQueued = false;
  /** The queued tick's timer while it waits out MIN_BATCH_GAP_MS. */
  private gapTimer: NodeJS.Timeout | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastClaimAt = 0;
  /** What the last tick planned with: the teams with work here, and whether any lane waited for a slot. */
  private lastPlan: SlotReport = { teams: 0, starved: false };
  private idleWaiters: (() => void)[] = [];
  /** Sends and settles what the claims took (attempt-runner.ts). */
  private readonly runner: AttemptRunner;

  constructor(private readonly options: DispatcherOptions) {
    this.slots = new SlotAccount(options.limits);
    this.speeds = new SharedSpeeds(options);
    this.runner = new AttemptRunner(this.attemptHost(), {
      ...options,
      speeds: this.speeds,
      minBatchGapMs: MIN_BATCH_GAP_MS,
    });
    this.membership = new Membership({
      services: options.services,
      workerId: options.workerId,
      logger: options.logger,
      heartbeatMs: options.heartbeatMs,
      discoveryMs: options.discoveryMs,
      housekeepingMs: options.housekeepingMs,
      onMembership: (partitions, liveWorkers) => {
        this.partitions = partitions;
        this.liveWorkers = liveWorkers;
        for (const [id, lane] of this.lanes)
          if (!partitions.has(partitionOf(id)) && lane.inFlight === 0 && !lane.claiming) this.lanes.delete(id);
        this.lastSweepAt = 0;
        this.schedule();
      },
      onGained: (partitions) => void this.speeds.learn(partitions),
      onDiscovered: (found) => {
        for (const { endpointId, nextDueAt } of found)
          if (this.partitions.has(partitionOf(endpointId))) this.lower(this.lane(endpointId), nextDueAt.getTime());
        this.schedule();
      },
    });
  }

  async start(): Promise<void> {
    await this.membership.start();
    this.speeds.start();
  }

  /**
   * Work became due at these endpoints (a NOTIFY); null: anywhere (a discovery pass). A wake-up for new work only
   * makes the lane look at its rows: an endpoint behind an open circuit or paused stays so until its probe time, or
   * until a wake-up that says its configuration changed (`reread`: resume, retry_now, an edit).
   */
  wake(targets: readonly WakeTarget[] | null): void {
    if (this.stopping) return;
    if (targets === null) {
      this.membership.discoverAll();
      return;
    }
    const now = this.now();
    for (const { endpointId, reread } of targets) {
      if (!this.partitions.has(partitionOf(endpointId))) continue;
      const lane = this.lane(endpointId);
      this.lower(lane, now);
      if (!reread) continue;
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
    if (this.gapTimer) clearTimeout(this.gapTimer);
    while (this.claimRunning || this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.speeds.stop();
    await this.membership.stop();
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

  /** Something of the lane is due at `at` (service clock): the next tick looks at it. */
  private lower(lane: Lane, at: number): void {
    lane.lower(at);
    this.ready.add(lane);
  }

  private teamStarted(teamKey: string, count: number): void {
    const running = (this.teamRunning.get(teamKey) ?? 0) + count;
    if (running > 0) this.teamRunning.set(teamKey, running);
    else this.teamRunning.delete(teamKey);
  }

  /**
   * Runs a tick soon: at once when one is due, else when the earliest lane becomes eligible. `urgent`: an ordered
   * endpoint's head settled and its next delivery waits for this tick, so no gap since the last claim.
   */
  private schedule(urgent = false): void {
    if (this.stopping) return;
    // A tick already queued runs soon enough, unless it waits out the gap and this one may not.
    if (this.tickQueued && !(urgent && this.gapTimer)) return;
    if (this.gapTimer) clearTimeout(this.gapTimer);
    this.gapTimer = null;
    this.tickQueued = true;
    const wait = urgent ? 0 : Math.max(0, this.lastClaimAt + MIN_BATCH_GAP_MS - Date.now());
    const run = () => {
      this.tickQueued = false;
      this.gapTimer = null;
      void this.tick();
    };
    if (wait > 0) this.gapTimer = setTimeout(run, wait);
    else setImmediate(run);
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
    while (this.later.length > 0 && this.later.peekValue()! <= realNow) {
      const at = this.later.peekValue()!;
      const lane = this.later.pop()!;
      if (lane.laterAt === at) lane.laterAt = Infinity;
      this.ready.add(lane);
    }
    if (realNow - this.lastSweepAt >= MAX_SLEEP_MS) {
      this.lastSweepAt = realNow;
      for (const lane of this.lanes.values()) this.ready.add(lane);
    }
    const reserve = reservedSlots(this.options.limits.serviceConcurrency);
    const candidates: SlotCandidate[] = [];
    const teamRunning = this.teamRunning;
    // Real milliseconds to sleep: until the next lane is due (service clock) or has a rate token (real time), or the
    // next look at every lane.
    let sleepMs = Math.max(0, this.lastSweepAt + MAX_SLEEP_MS - realNow);
    const notNow = (lane: Lane, waitMs: number | null) => {
      this.ready.delete(lane);
      if (waitMs === null) return;
      sleepMs = Math.min(sleepMs, waitMs);
      // One entry per lane and time: a lane looked at again (every lane, every second) is not queued twice.
      if (realNow + waitMs >= lane.laterAt) return;
      lane.laterAt = realNow + waitMs;
      this.later.push(lane, lane.laterAt);
    };
    this.options.services.metrics.dispatchLanesLookedAt.inc(this.ready.size);
    for (const lane of this.ready) {
      // A lane dropped meanwhile, or one whose claim runs (its answer puts it back).
      if (this.lanes.get(lane.id) !== lane || lane.claiming) {
        this.ready.delete(lane);
        continue;
      }
      lane.refill(realNow);
      const at = lane.eligibleAt();
      let free = lane.free();
      if (free === 0) {
        // A settle of this lane ticks again. Other workers' leases (a handoff, a dead worker) end with no settle
        // here: such a lane asks again now and then (the look at every lane), and the claim applies the rule with
        // what is live.
        if (lane.foreignInFlight === 0 || lane.inFlight >= (lane.maxConcurrency ?? UNKNOWN_CONCURRENCY)) {
          notNow(lane, null);
          continue;
        }
        free = 1;
      }
      if (at > now) {
        notNow(lane, at === Infinity ? null : at - now);
        continue;
      }
      const held = Math.max(lane.notBefore, lane.parkedUntil);
      if (held > realNow) {
        notNow(lane, held - realNow);
        continue;
      }
      if (lane.tokens < 1) {
        notNow(lane, lane.tokenWaitMs());
        continue;
      }
      const speed = this.speeds.classOf(lane, realNow);
      candidates.push({
        endpointId: lane.id,
        teamKey: lane.teamKey,
        // A lane of unknown speed starts one attempt; once it has answered, it is known fast or slow.
        want: Math.min(speed === 'unknown' ? 1 : free, free, Math.floor(lane.tokens)),
        inFlight: lane.inFlight,
        lastServedAt: lane.lastServedAt,
        headroom: headroomFor(speed, reserve),
        slow: speed === 'slow',
      });
    }
    const teams = new Set([...teamRunning.keys(), ...candidates.map((c) => c.teamKey)]).size;
    const { free, slowCap, sharedOut } = this.slots.budget(teams, this.running, this.liveWorkers, realNow);
    const plan = planSlots({ candidates, teamRunning, free, slowCap, maxLanes: MAX_CLAIM_ENDPOINTS });
    this.lastPlan = { teams, starved: plan.starved };
    const requests: LaneRequest[] = plan.requests.map((r) => ({ ...r, mine: this.lanes.get(r.endpointId)!.inFlight }));
    // Slots held here free themselves with a settle (which ticks again); slots other workers hold do not.
    if (plan.starved) sleepMs = Math.min(sleepMs, this.slots.starvedSleepMs(sharedOut, realNow));
    // Tell the other workers (through this worker's slot row) when its count, its teams or its waiting changed and
    // nothing is claimed now that would say so: a worker going idle gives its slots back at once.
    const report = { teams, starved: plan.starved };
    const recheck = this.slots.recheckDue(plan.starved, sharedOut, realNow);
    if (requests.length === 0 && (recheck || this.slots.reportDue(report, this.running, this.liveWorkers, realNow))) {
      // Tell and ask without the claim's locks (other workers' claims never wait for it); the next tick plans with
      // what is free by then, sooner while a lane known fast waits.
      this.slots.reporting(
        realNow,
        recheck,
        candidates.some((c) => c.headroom === 0),
      );
      this.claimRunning = true;
      await this.report(report);
      this.claimRunning = false;
      this.notifyIdle();
      this.schedule();
      return;
    }
    if (requests.length > 0) {
      this.slots.claiming(realNow);
      for (const request of requests) {
        const lane = this.lanes.get(request.endpointId)!;
        lane.claiming = true;
        lane.lastServedAt = realNow;
      }
      this.claimRunning = true;
      this.lastClaimAt = Date.now();
      await this.claim(requests, report);
      this.claimRunning = false;
      this.notifyIdle();
      this.schedule();
      return;
    }
    if (!this.stopping) this.timer = setTimeout(() => void this.tick(), Math.min(MAX_SLEEP_MS, Math.max(1, sleepMs)));
  }

  /** This worker's slot row written and the other workers' counts read (DispatchService.reportSlots). */
  private async report(report: SlotReport): Promise<void> {
    const running = this.running;
    try {
      const capacity = await this.options.services.dispatch.reportSlots(this.options.workerId, { running, ...report });
      this.slots.wrote(capacity, running, report);
    } catch (error) {
      this.slots.forget(report);
      if (isConnectionError(error)) this.unavailableUntil = Date.now() + UNAVAILABLE_RECHECK_MS;
      if (!this.stopping) this.options.logger.warn({ err: error }, 'reporting the delivery slots failed');
    }
  }

  private async claim(requests: LaneRequest[], report: SlotReport): Promise<void> {
    const { services, workerId, logger } = this.options;
    const epochs = new Map(requests.map((r) => [r.endpointId, this.lanes.get(r.endpointId)?.healthEpoch ?? 0]));
    const span = startClaimSpan(workerId, requests.length);
    const slots = {
      limit: this.options.limits.serviceConcurrency,
      running: this.running,
      ...report,
    };
    let result: ClaimResult;
    try {
      result = await services.dispatch.claim(workerId, requests, { slots });
    } catch (error) {
      markFailed(span, errorReason(error));
      span.end();
      for (const request of requests) {
        const lane = this.lanes.get(request.endpointId);
        if (!lane) continue;
        lane.claiming = false;
        this.ready.add(lane);
      }
      // What the slot row says is unknown now: the next tick writes it again.
      this.slots.forget(report);
      if (isConnectionError(error)) {
        // Postgres is away (a restart, a network cut): nothing is any lane's fault. Every lane looks again in a
        // second, and none is held back once the database is there again.
        this.unavailableUntil = Date.now() + UNAVAILABLE_RECHECK_MS;
        if (!this.stopping) logger.warn({ err: error }, 'claiming deliveries failed: the database is unavailable');
        return;
      }
      // One bad endpoint must not hold back the others: a failed batch is claimed again in halves (one bad lane
      // costs about log2(batch) statements, not one per lane), and a lane that fails alone backs off.
      if (requests.length > 1) {
        const half = Math.ceil(requests.length / 2);
        for (const part of [requests.slice(0, half), requests.slice(half)]) {
          for (const request of part) {
            const lane = this.lanes.get(request.endpointId);
            if (lane) lane.claiming = true;
          }
          await this.claim(part, report);
        }
        return;
      }
      const lane = this.lanes.get(requests[0]!.endpointId);
      if (lane) {
        lane.claimFailures += 1;
        lane.notBefore = Date.now() + Math.min(MAX_LANE_BACKOFF_MS, 500 * 2 ** Math.min(6, lane.claimFailures));
      }
      logger.error({ err: error, endpoint_id: requests[0]!.endpointId }, 'claiming deliveries failed');
      return;
    }
    this.claimed(requests, result, { epochs, slots, report, span });
  }

  /**
   * What memory learns from a claim's answer (the lanes as read, the attempts started, the slots as written), and the
   * attempts it took, started.
   */
  private claimed(
    requests: readonly LaneRequest[],
    result: ClaimResult,
    made: { epochs: Map<string, number>; slots: SlotClaim; report: SlotReport; span: Span },
  ): void {
    const { epochs, slots, report, span } = made;
    endClaimSpan(span, result);
    this.slots.wrote(result.capacity, slots.running + result.attempts.length + result.finished.length, report);
    const now = this.now();
    const realNow = Date.now();
    this.slots.spend(result.attempts.length);
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
      this.ready.add(lane);
      const state = states.get(request.endpointId);
      if (!state) {
        // Not this worker's any more (its partition moved) or the endpoint row is gone: nothing to claim here.
        if (lane.inFlight === 0) this.lanes.delete(lane.id);
        continue;
      }
      lane.apply(state, epochs.get(lane.id) ?? lane.healthEpoch);
      const claimed = claimedPer.get(lane.id) ?? 0;
      lane.started(realNow, claimed);
      this.teamStarted(lane.teamKey, claimed);
      lane.tokens -= claimed;
      const progressed = claimed + (finishedPer.get(lane.id) ?? 0);
      // Short although the slots allowed more and the claim itself saw more rows due (a row locked by another
      // transaction, a foreign lease): look again a little later rather than at once. Rows that arrived during the
      // claim (a wake-up) are not a reason to wait: they are claimed on the next tick. Short of slots is no
      // reason either: a settle, or the slot recheck, brings the lane back.
      const stillDue = state.nextDueAt !== null && state.nextDueAt.getTime() <= now;
      const slotShort = state.granted < request.want;
      if (
        !slotShort &&
        progressed < request.want &&
        stillDue &&
        state.status === 'enabled' &&
        (lane.free() > 0 || progressed === 0)
      )
        lane.notBefore = Date.now() + SHORT_CLAIM_RECHECK_MS;
      if (slotShort) this.slots.shortOfSlots(realNow);
      if (lane.nextDueAt === Infinity && lane.inFlight === 0) this.lanes.delete(lane.id);
    }
    for (const attempt of result.attempts) void this.runner.run(attempt, realNow, span.spanContext());
  }

  /** What the attempt runner sees of this dispatcher: the lanes, and the count of attempts running here. */
  private attemptHost(): AttemptHost {
    return {
      laneOf: (id) => this.lanes.get(id),
      lower: (lane, at) => this.lower(lane, at),
      now: () => this.now(),
      attemptStarted: () => {
        this.running += 1;
        this.options.services.metrics.poolInUse.set(this.running);
      },
      attemptEnded: (attempt, startedAt) => this.attemptEnded(attempt, startedAt),
      isStopping: () => this.stopping,
      claimAlong: (attempt) => this.claimAlong(attempt),
    };
  }

  /**
   * The next claim of an ordered endpoint whose head succeeded, to be made in the head's settlement round trip
   * (docs/delivery.md, "Ordered endpoints"): only when the tick would give the lane a slot now anyway. No other claim
   * runs (this worker's slot count is written by one claim at a time), no lane waited for a slot at the last tick
   * (fairness: a freed slot goes to the planner then), the endpoint is this worker's, its circuit closed, nothing else
   * of it in flight, a rate token there, and the deployment's slots have room once the head's is free.
   */
  private claimAlong(attempt: ClaimedAttempt): ClaimAlong | null {
    if (this.stopping || this.claimRunning || this.lastPlan.starved || this.unavailableUntil > Date.now()) return null;
    const lane = this.lanes.get(attempt.endpointId);
    if (!lane || lane.claiming || lane.inFlight !== 1 || lane.foreignInFlight > 0) return null;
    if (lane.health.circuit !== 'closed' || !this.partitions.has(partitionOf(lane.id))) return null;
    const realNow = Date.now();
    lane.refill(realNow);
    if (lane.tokens < 1 || Math.max(lane.notBefore, lane.parkedUntil) > realNow) return null;
    const running = this.running - 1;
    const reserve = reservedSlots(this.options.limits.serviceConcurrency);
    const speed = this.speeds.classOf(lane, realNow);
    const headroom = headroomFor(speed, reserve);
    const { free, slowCap } = this.slots.budget(this.lastPlan.teams, running, this.liveWorkers, realNow);
    if (free - headroom < 1 || (speed === 'slow' && slowCap < 1)) return null;
    const report = { ...this.lastPlan };
    const slots = { limit: this.options.limits.serviceConcurrency, running, ...report };
    const requests = [{ endpointId: lane.id, want: 1, mine: 0, headroom }];
    const epochs = new Map([[lane.id, lane.healthEpoch]]);
    const span = startClaimSpan(this.options.workerId, 1);
    this.slots.claiming(realNow);
    lane.claiming = true;
    lane.lastServedAt = realNow;
    this.claimRunning = true;
    this.lastClaimAt = Date.now();
    return {
      requests,
      options: { slots },
      done: (claim, error) => {
        this.claimRunning = false;
        if (claim) this.claimed(requests, claim, { epochs, slots, report, span });
        else {
          if (error) {
            markFailed(span, errorReason(error));
            // What the slot row says is unknown now: the next tick writes it again.
            this.slots.forget(report);
            if (isConnectionError(error)) this.unavailableUntil = Date.now() + UNAVAILABLE_RECHECK_MS;
          }
          span.end();
          lane.claiming = false;
          this.ready.add(lane);
        }
        this.notifyIdle();
        this.schedule(true);
      },
    };
  }

  /** An attempt ended (settled or not): its slot is free, and its lane is looked at again. */
  private attemptEnded(attempt: ClaimedAttempt, startedAt: number): void {
    this.running -= 1;
    this.options.services.metrics.poolInUse.set(this.running);
    const lane = this.lanes.get(attempt.endpointId);
    this.teamStarted(lane?.teamKey ?? attempt.teamId, -1);
    if (lane) {
      lane.ended(startedAt);
      this.ready.add(lane);
      const idle = lane.inFlight === 0 && !lane.claiming;
      if (idle && (lane.nextDueAt === Infinity || !this.partitions.has(partitionOf(lane.id))))
        this.lanes.delete(lane.id);
    }
    this.notifyIdle();
    this.schedule(attempt.sequence !== null);
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
