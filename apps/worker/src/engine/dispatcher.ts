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
  type ClaimResult,
  type LaneRequest,
  type Services,
  type SettledOutcome,
  type SettlementResult,
  type SlotCapacity,
  type WakeTarget,
} from '@svc/core';
import FlatQueue from 'flatqueue';
import { KeyedBatcher } from './keyed-batcher.js';
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
import { planSlots, type SlotCandidate } from './fair-share.js';
import { EndpointSpeeds, Lane, SLOW_ATTEMPT_MS, UNKNOWN_CONCURRENCY } from './lane.js';
import { Membership } from './membership.js';

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
/**
 * Work waiting for slots other workers hold: the slot counts are read again this often (their settles wake no one
 * here); sooner while a lane known fast waits, which a slot freed anywhere may serve at once.
 */
const STARVED_RECHECK_MS = 25;
const FAST_STARVED_RECHECK_MS = 5;
/** A worker's slot count drifting down (attempts settling, nothing to claim) is written at most this often. */
const REPORT_GAP_MS = 50;
/** After a connection error, claims wait this long (the lanes keep their state). */
const UNAVAILABLE_RECHECK_MS = 1000;
/** The longest a lane whose claims keep failing on its own waits before it is tried again. */
const MAX_LANE_BACKOFF_MS = 30_000;
/** The longest a timer waits: the service clock may move (tests), so due times are compared at least this often. */
const MAX_SLEEP_MS = 1000;
/** Endpoints' speeds kept in memory, and the most read back when partitions are gained. */
const SPEEDS_KEPT = 10_000;
const SPEEDS_LEARNT_AT_MOST = SPEEDS_KEPT / 2;
/** How often endpoints whose speed class changed are saved (one statement, only when some did). */
const SPEEDS_SAVE_MS = 1000;

/**
 * The slots of service_concurrency that slow lanes may never take (docs/delivery.md, "Fairness"): a third, at least
 * one, so slow receivers cannot hold every slot while others wait. A lane of unknown speed leaves one free.
 */
export function reservedSlots(serviceConcurrency: number): number {
  return serviceConcurrency <= 1 ? 0 : Math.max(1, Math.floor(serviceConcurrency / 3));
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
  private readonly speeds = new EndpointSpeeds(SPEEDS_KEPT);
  private speedsTimer: NodeJS.Timeout | null = null;
  private readonly membership: Membership;
  private partitions: ReadonlySet<number> = new Set();
  private liveWorkers = 1;
  private running = 0;
  private globalTokens = 0;
  private globalRefilledAt = 0;
  /** Other workers' slots as the last claim read them. */
  private capacity: SlotCapacity = { othersInUse: 0, othersStarvedTeams: 0 };
  /** What this worker's slot row says since its last claim: its count, teams and whether it waited for slots. */
  private reported = { inUse: 0, teams: 0, starved: false };
  /** Not before this real time: the next read of the slot counts while work waits for other workers' slots. */
  private starvedRecheckAt = 0;
  private stopping = false;
  private claimRunning = false;
  /** After a connection error: no claim before this real time. */
  private unavailableUntil = 0;
  private tickQueued = false;
  /** The queued tick's timer while it waits out MIN_BATCH_GAP_MS. */
  private gapTimer: NodeJS.Timeout | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastClaimAt = 0;
  private lastReportAt = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly settles: KeyedBatcher<PendingSettle, SettledOutcome>;

  constructor(private readonly options: DispatcherOptions) {
    this.settles = new KeyedBatcher((pending) => this.settleBatch(pending), {
      maxConcurrent: 2,
      maxBatch: 500,
      minGapMs: MIN_BATCH_GAP_MS,
      // An endpoint's circuit counts consecutive failures from what the previous settlement decided: two batches
      // of one endpoint at once would each start from the same count and one would lose the other's failures.
      keyOf: (pending) => pending.outcome.attempt.endpointId,
      // An ordered endpoint sends its next delivery only once its head has settled: nothing to gain by waiting.
      urgent: (pending) => pending.outcome.attempt.sequence !== null,
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
      onGained: (partitions) => void this.learnSpeeds(partitions),
      onDiscovered: (found) => {
        for (const { endpointId, nextDueAt } of found)
          if (this.partitions.has(partitionOf(endpointId))) this.lower(this.lane(endpointId), nextDueAt.getTime());
        this.schedule();
      },
    });
  }

  async start(): Promise<void> {
    await this.membership.start();
    this.speedsTimer = setInterval(() => void this.saveSpeeds(), SPEEDS_SAVE_MS);
    this.speedsTimer.unref();
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
    if (this.speedsTimer) clearInterval(this.speedsTimer);
    await this.saveSpeeds();
    await this.membership.stop();
  }

  /**
   * Endpoints whose speed class is new or changed, saved for whoever owns their partition next (migration 0042): after
   * a partition moves, its endpoints' lanes are not of unknown speed (docs/delivery.md, "Fairness").
   */
  private async saveSpeeds(): Promise<void> {
    const changed = this.speeds.takeChanged();
    if (changed.length === 0) return;
    try {
      await this.options.services.ownership.saveSpeeds(changed);
    } catch (error) {
      // Only a later owner's first attempts pay for it: they learn the speeds again.
      this.options.logger.warn({ err: error }, 'saving endpoint speeds failed');
    }
  }

  private async learnSpeeds(partitions: readonly number[]): Promise<void> {
    try {
      const known = await this.options.services.ownership.knownSpeeds(partitions, SPEEDS_LEARNT_AT_MOST);
      for (const { endpointId, meanMs } of known) this.speeds.learn(endpointId, meanMs);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'reading endpoint speeds failed');
    }
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

  /** This worker's share of dispatch_rate: a token bucket in real time. */
  private rateTokens(realNow: number): number {
    const rateShare = Math.max(1, this.options.limits.dispatchRate / this.liveWorkers);
    this.globalTokens = Math.min(
      rateShare,
      this.globalTokens + (Math.max(0, realNow - this.globalRefilledAt) / 1000) * rateShare,
    );
    this.globalRefilledAt = realNow;
    return Math.floor(this.globalTokens);
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
      const speed = this.speedOf(lane, realNow);
      candidates.push({
        endpointId: lane.id,
        teamKey: lane.teamKey,
        // A lane of unknown speed starts one attempt; once it has answered, it is known fast or slow.
        want: Math.min(speed === 'unknown' ? 1 : free, free, Math.floor(lane.tokens)),
        inFlight: lane.inFlight,
        lastServedAt: lane.lastServedAt,
        headroom: speed === 'fast' ? 0 : speed === 'unknown' ? Math.min(1, reserve) : reserve,
        slow: speed === 'slow',
      });
    }
    const teams = new Set([...teamRunning.keys(), ...candidates.map((c) => c.teamKey)]).size;
    const { free, slowCap, sharedOut } = this.slotBudget(teams, this.rateTokens(realNow));
    const plan = planSlots({ candidates, teamRunning, free, slowCap, maxLanes: MAX_CLAIM_ENDPOINTS });
    const requests: LaneRequest[] = plan.requests.map((r) => ({ ...r, mine: this.lanes.get(r.endpointId)!.inFlight }));
    if (plan.starved) {
      // Slots held here free themselves with a settle (which ticks again); slots other workers hold do not.
      if (sharedOut) sleepMs = Math.min(sleepMs, Math.max(0, this.starvedRecheckAt - realNow));
      if (this.globalTokens < 1) sleepMs = Math.min(sleepMs, 1000 / Math.max(1, this.options.limits.dispatchRate));
    }
    // Tell the other workers (through this worker's slot row) when its count, its teams or its waiting changed and
    // nothing is claimed now that would say so: a worker going idle gives its slots back at once.
    const recheck = plan.starved && sharedOut && realNow >= this.starvedRecheckAt;
    if (requests.length === 0 && (recheck || this.reportDue(plan.starved, teams, realNow))) {
      // Tell and ask without the claim's locks (other workers' claims never wait for it); the next tick plans with
      // what is free by then, sooner while a lane known fast waits.
      this.lastReportAt = realNow;
      if (recheck) {
        const fastWaiting = candidates.some((c) => c.headroom === 0);
        this.starvedRecheckAt = realNow + (fastWaiting ? FAST_STARVED_RECHECK_MS : STARVED_RECHECK_MS);
      }
      this.claimRunning = true;
      await this.report({ teams, starved: plan.starved });
      this.claimRunning = false;
      this.notifyIdle();
      this.schedule();
      return;
    }
    if (requests.length > 0) {
      this.lastReportAt = realNow;
      for (const request of requests) {
        const lane = this.lanes.get(request.endpointId)!;
        lane.claiming = true;
        lane.lastServedAt = realNow;
      }
      this.claimRunning = true;
      this.lastClaimAt = Date.now();
      await this.claim(requests, { teams, starved: plan.starved });
      this.claimRunning = false;
      this.notifyIdle();
      this.schedule();
      return;
    }
    if (!this.stopping) this.timer = setTimeout(() => void this.tick(), Math.min(MAX_SLEEP_MS, Math.max(1, sleepMs)));
  }

  /**
   * The slots this worker may plan with: service_concurrency less what other workers hold (as the last claim read
   * it) and what runs here. Slow lanes get less: never the reserve (their headroom), and while other workers' teams
   * wait for slots, no more than this worker's share by teams (`slowCap`; slow attempts hold slots for seconds, fast
   * ones give them back at once, so capping those would only leave slots idle). `sharedOut`: other workers hold or
   * wait for slots, so their settles (which do not wake this worker) matter.
   */
  private slotBudget(teams: number, rateTokens: number): { free: number; slowCap: number; sharedOut: boolean } {
    const limit = this.options.limits.serviceConcurrency;
    const { othersInUse, othersStarvedTeams } = this.capacity;
    const free = limit - othersInUse - this.running;
    let slowCap = Infinity;
    if (othersStarvedTeams > 0 && teams > 0)
      slowCap = Math.max(1, Math.floor((limit * teams) / (teams + othersStarvedTeams))) - this.running;
    return {
      free: Math.max(0, Math.min(free, rateTokens)),
      slowCap,
      sharedOut: othersInUse > 0 || othersStarvedTeams > 0,
    };
  }

  /**
   * Whether this worker's slot row should be written although nothing is claimed: only other workers read it, so
   * with one live worker never; else when its waiting changed, at once when it went idle, and at most every
   * REPORT_GAP_MS while its count drifts (its claims write it anyway whenever it claims).
   */
  private reportDue(starved: boolean, teams: number, realNow: number): boolean {
    if (this.liveWorkers <= 1) return false;
    if (this.reported.starved !== starved || (starved && this.reported.teams !== teams)) return true;
    if (this.reported.inUse === this.running) return false;
    return this.running === 0 || realNow - this.lastReportAt >= REPORT_GAP_MS;
  }

  /**
   * How a lane's attempts hold slots: slow (an attempt running over a second, or answers slower than that lately),
   * fast, or unknown (it has not answered here yet).
   */
  private speedOf(lane: Lane, realNow: number): 'slow' | 'fast' | 'unknown' {
    if (lane.holdsSlowAttempt(realNow)) return 'slow';
    const mean = this.speeds.meanMs(lane.id);
    if (mean === undefined) return lane.inFlight > 0 ? 'slow' : 'unknown';
    return mean > SLOW_ATTEMPT_MS ? 'slow' : 'fast';
  }

  /** This worker's slot row written and the other workers' counts read (DispatchService.reportSlots). */
  private async report(report: { teams: number; starved: boolean }): Promise<void> {
    const running = this.running;
    try {
      this.capacity = await this.options.services.dispatch.reportSlots(this.options.workerId, { running, ...report });
      this.reported = { inUse: running, ...report };
    } catch (error) {
      this.reported = { inUse: -1, teams: -1, starved: !report.starved };
      if (isConnectionError(error)) this.unavailableUntil = Date.now() + UNAVAILABLE_RECHECK_MS;
      if (!this.stopping) this.options.logger.warn({ err: error }, 'reporting the delivery slots failed');
    }
  }

  private async claim(requests: LaneRequest[], report: { teams: number; starved: boolean }): Promise<void> {
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
      this.reported = { inUse: -1, teams: -1, starved: !report.starved };
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
    endClaimSpan(span, result);
    this.capacity = result.capacity;
    this.reported = {
      inUse: slots.running + result.attempts.length + result.finished.length,
      teams: report.teams,
      starved: report.starved,
    };
    const now = this.now();
    const realNow = Date.now();
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
      if (slotShort && !(this.starvedRecheckAt > realNow)) this.starvedRecheckAt = realNow + STARVED_RECHECK_MS;
      if (lane.nextDueAt === Infinity && lane.inFlight === 0) this.lanes.delete(lane.id);
    }
    for (const attempt of result.attempts) void this.run(attempt, realNow, span.spanContext());
  }

  /** One claimed attempt: send, then settle; traced as a job of the message's trace (delivery-tracing.ts). */
  private async run(attempt: ClaimedAttempt, startedAt: number, claim: SpanContext): Promise<void> {
    this.running += 1;
    const { services, logger } = this.options;
    services.metrics.poolInUse.set(this.running);
    const job = startJobSpan(attempt, claim, this.options.workerId);
    let outcome: AttemptOutcome | null = null;
    try {
      outcome = await sendTraced(attempt, job.context, this.options.send);
      this.speeds.record(attempt.endpointId, outcome.durationMs);
      const settled = await settleTraced(outcome, job.context, (pending) => this.settles.submit(pending));
      this.options.onSettled?.(outcome, settled);
    } catch (error) {
      markFailed(job.span, errorReason(error));
      // Its row stays leased to this worker until the lease ends; then it is due again (same webhook-id).
      logger.error({ err: error, delivery_id: attempt.deliveryId }, 'settling an attempt failed');
      const lane = this.lanes.get(attempt.endpointId);
      if (lane) this.lower(lane, attempt.startedAt.getTime() + attempt.timeoutMs + LEASE_MARGIN_MS);
    } finally {
      endJobSpan(job.span, outcome);
      this.running -= 1;
      services.metrics.poolInUse.set(this.running);
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

  /**
   * What memory learns from a settled batch: the circuits as written, and the lanes' next due times. Endpoints the
   * batch disabled get their backlogs canceled in bounded batches beside the engine, not in its settlement slots.
   */
  private applySettlement(outcomes: AttemptOutcome[], result: SettlementResult): SettledOutcome[] {
    if (result.disabled.length > 0)
      void this.options.services.ownership.cancelDisabledBacklogs(result.disabled).catch((error: unknown) => {
        // The reconciliation sweep cancels what is left.
        if (!this.stopping) this.options.logger.error({ err: error }, 'canceling a disabled endpoint’s backlog failed');
      });
    for (const [id, health] of result.health) {
      const lane = this.lanes.get(id);
      if (lane) {
        lane.health = health;
        lane.healthEpoch += 1;
      }
    }
    // Circuits another writer moved since this worker read them (a resume, retry_now, a handoff): nothing of them
    // was written; the lane claims again soon, and the claim (which applies the stored circuit) reads them anew.
    for (const id of result.stale) {
      const lane = this.lanes.get(id);
      if (!lane) continue;
      lane.health = { ...lane.health, nextProbeAt: null, version: undefined };
      lane.healthEpoch += 1;
      this.lower(lane, this.now());
    }
    outcomes.forEach((outcome, i) => {
      const decision = result.outcomes[i]!.decision;
      const lane = this.lanes.get(outcome.attempt.endpointId);
      if (lane && decision.status === 'retry_wait') this.lower(lane, decision.nextAttemptAt.getTime());
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
