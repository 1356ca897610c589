import type { SlotCapacity } from '@svc/core';

/**
 * Work waiting for slots other workers hold: the slot counts are read again this often (their settles wake no one
 * here); sooner while a lane known fast waits, which a slot freed anywhere may serve at once.
 */
export const STARVED_RECHECK_MS = 25;
const FAST_STARVED_RECHECK_MS = 5;
/** A worker's slot count drifting down (attempts settling, nothing to claim) is written at most this often. */
const REPORT_GAP_MS = 50;

/** What this worker's slot row says: its count, its teams and whether it waited for slots. */
export interface SlotReport {
  teams: number;
  starved: boolean;
}

/**
 * One worker's account of the deployment's delivery slots (docs/delivery.md, "Fairness"): what the other workers hold
 * as the last claim or report read it, what this worker's slot row says, when the counts are read again while work
 * waits for other workers' slots, and this worker's share of dispatch_rate. The dispatcher plans with it; the claim
 * (DispatchService.claim) and the report (DispatchService.reportSlots) keep it up to date. `running` is always the
 * dispatcher's count of attempts running here.
 */
export class SlotAccount {
  /** Other workers' slots as the last claim or report read them. */
  private capacity: SlotCapacity = { othersInUse: 0, othersStarvedTeams: 0 };
  /** What this worker's slot row says since its last claim or report. */
  private reported = { inUse: 0, teams: 0, starved: false };
  /** Not before this real time: the next read of the slot counts while work waits for other workers' slots. */
  private starvedRecheckAt = 0;
  private lastReportAt = 0;
  private rateTokens = 0;
  private rateRefilledAt = 0;

  constructor(private readonly limits: { serviceConcurrency: number; dispatchRate: number }) {}

  /**
   * The slots this worker may plan with: service_concurrency less what other workers hold and what runs here, and
   * no more than its rate tokens. Slow lanes get less: never the reserve (their headroom), and while other workers'
   * teams wait for slots, no more than this worker's share by teams (`slowCap`; slow attempts hold slots for
   * seconds, fast ones give them back at once, so capping those would only leave slots idle). `sharedOut`: other
   * workers hold or wait for slots, so their settles (which do not wake this worker) matter.
   */
  budget(
    teams: number,
    running: number,
    liveWorkers: number,
    realNow: number,
  ): { free: number; slowCap: number; sharedOut: boolean } {
    const limit = this.limits.serviceConcurrency;
    const { othersInUse, othersStarvedTeams } = this.capacity;
    const free = limit - othersInUse - running;
    let slowCap = Infinity;
    if (othersStarvedTeams > 0 && teams > 0)
      slowCap = Math.max(1, Math.floor((limit * teams) / (teams + othersStarvedTeams))) - running;
    return {
      free: Math.max(0, Math.min(free, this.refillRate(liveWorkers, realNow))),
      slowCap,
      sharedOut: othersInUse > 0 || othersStarvedTeams > 0,
    };
  }

  /** This worker's share of dispatch_rate: a token bucket in real time. */
  private refillRate(liveWorkers: number, realNow: number): number {
    const share = Math.max(1, this.limits.dispatchRate / liveWorkers);
    this.rateTokens = Math.min(share, this.rateTokens + (Math.max(0, realNow - this.rateRefilledAt) / 1000) * share);
    this.rateRefilledAt = realNow;
    return Math.floor(this.rateTokens);
  }

  /**
   * How long a tick whose lanes wait for slots may sleep at most: until the other workers' counts are read again
   * (when they hold or wait for slots), or until a rate token refills.
   */
  starvedSleepMs(sharedOut: boolean, realNow: number): number {
    let ms = Infinity;
    if (sharedOut) ms = Math.max(0, this.starvedRecheckAt - realNow);
    if (this.rateTokens < 1) ms = Math.min(ms, 1000 / Math.max(1, this.limits.dispatchRate));
    return ms;
  }

  /** Whether the other workers' counts are due to be read again while this worker's work waits for their slots. */
  recheckDue(starved: boolean, sharedOut: boolean, realNow: number): boolean {
    return starved && sharedOut && realNow >= this.starvedRecheckAt;
  }

  /**
   * Whether this worker's slot row should be written although nothing is claimed: only other workers read it, so
   * with one live worker never; else when its waiting changed, at once when it went idle, and at most every
   * REPORT_GAP_MS while its count drifts (its claims write it anyway whenever it claims).
   */
  reportDue(report: SlotReport, running: number, liveWorkers: number, realNow: number): boolean {
    if (liveWorkers <= 1) return false;
    const { reported } = this;
    if (reported.starved !== report.starved || (report.starved && reported.teams !== report.teams)) return true;
    if (reported.inUse === running) return false;
    return running === 0 || realNow - this.lastReportAt >= REPORT_GAP_MS;
  }

  /**
   * A report (no claim) is about to be written: with `recheck`, the next read of the counts is due in
   * FAST_STARVED_RECHECK_MS while a lane known fast waits, else STARVED_RECHECK_MS.
   */
  reporting(realNow: number, recheck: boolean, fastWaiting: boolean): void {
    this.lastReportAt = realNow;
    if (recheck) this.starvedRecheckAt = realNow + (fastWaiting ? FAST_STARVED_RECHECK_MS : STARVED_RECHECK_MS);
  }

  /** A claim is about to be made (it writes the slot row too). */
  claiming(realNow: number): void {
    this.lastReportAt = realNow;
  }

  /** The slot row as written, and the other workers' counts as read with it (a report or a claim). */
  wrote(capacity: SlotCapacity, inUse: number, report: SlotReport): void {
    this.capacity = capacity;
    this.reported = { inUse, ...report };
  }

  /** A report or claim failed: what the slot row says is unknown, so the next tick writes it again. */
  forget(report: SlotReport): void {
    this.reported = { inUse: -1, teams: -1, starved: !report.starved };
  }

  /** Attempts claimed use rate tokens. */
  spend(attempts: number): void {
    this.rateTokens -= attempts;
  }

  /** A claim got fewer slots than asked: read the counts again soon, unless a read is already due. */
  shortOfSlots(realNow: number): void {
    if (!(this.starvedRecheckAt > realNow)) this.starvedRecheckAt = realNow + STARVED_RECHECK_MS;
  }
}
