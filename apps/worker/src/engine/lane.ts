import { CLOSED_CIRCUIT, type EndpointHealthState, type LaneState } from '@svc/core';

/** Most attempts asked of one endpoint in one claim when nothing is known of it yet. */
export const UNKNOWN_CONCURRENCY = 1;
/** An attempt running longer than this makes its lane slow: it may not take the deployment's reserved slots. */
export const SLOW_ATTEMPT_MS = 1000;
/** A paused endpoint is read again this often even without a wake-up. */
const PARKED_RECHECK_MS = 10_000;

/** One endpoint this worker owns, with what it knows of it. */
export class Lane {
  /** The earliest time (service clock, ms) a row of this endpoint may be due; Infinity when none is known. */
  nextDueAt = 0;
  inFlight = 0;
  /** When (real time, ms) each of its running attempts started, oldest first. */
  readonly startedAt: number[] = [];
  /** Attempts of other workers still holding rows of this endpoint (a handoff), as the last claim saw them. */
  foreignInFlight = 0;
  tokens = 1;
  refilledAt = 0;
  ratePerSecond: number | null = null;
  maxConcurrency: number | null = null;
  /** The endpoint's team, once a claim has read it (fairness is across teams first). */
  teamId: string | null = null;
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
  /** When (real time, ms) this lane was last given a slot: ties between equal lanes go to the one served longest ago. */
  lastServedAt = 0;
  /** The real time (ms) the dispatcher will look at this lane again without any event; Infinity: none queued. */
  laterAt = Infinity;

  constructor(readonly id: string) {}

  /** The team this lane counts for; an endpoint not read yet counts as a team of its own. */
  get teamKey(): string {
    return this.teamId ?? this.id;
  }

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

  started(realNow: number, count: number): void {
    this.inFlight += count;
    for (let i = 0; i < count; i++) this.startedAt.push(realNow);
  }

  /** One attempt of this lane ended; `startedAt` is when it started (real time). */
  ended(startedAt: number): void {
    this.inFlight -= 1;
    const i = this.startedAt.indexOf(startedAt);
    if (i >= 0) this.startedAt.splice(i, 1);
  }

  /** An attempt has been running longer than SLOW_ATTEMPT_MS. */
  holdsSlowAttempt(realNow: number): boolean {
    return this.startedAt.length > 0 && realNow - this.startedAt[0]! > SLOW_ATTEMPT_MS;
  }

  /**
   * What the claim read of the endpoint replaces what memory had (Postgres is the authority), except a circuit that
   * a settlement set while the claim ran (`epoch` is the lane's when the claim started): that one is newer than the
   * row the claim read.
   */
  apply(state: LaneState, epoch: number): void {
    this.maxConcurrency = state.maxConcurrency;
    this.teamId = state.teamId;
    if (this.ratePerSecond !== state.ratePerSecond) {
      this.ratePerSecond = state.ratePerSecond;
      this.tokens = Math.min(this.tokens, state.ratePerSecond);
    }
    if (this.healthEpoch === epoch) this.health = state.health;
    this.foreignInFlight = state.foreignInFlight;
    this.nextDueAt = Math.min(state.nextDueAt ? state.nextDueAt.getTime() : Infinity, this.dueWhileClaiming);
    this.dueWhileClaiming = Infinity;
    this.parkedUntil = state.status === 'paused' && !state.deleted ? Date.now() + PARKED_RECHECK_MS : 0;
  }
}
