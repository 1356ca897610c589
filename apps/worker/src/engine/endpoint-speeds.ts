import type { Logger } from 'pino';
import type { Services } from '@svc/core';
import { SLOW_ATTEMPT_MS, type Lane } from './lane.js';

/** Endpoints' speeds kept in memory, and the most read back when partitions are gained. */
const SPEEDS_KEPT = 10_000;
const SPEEDS_LEARNT_AT_MOST = SPEEDS_KEPT / 2;
/** How often endpoints whose speed class changed are saved (one statement, only when some did). */
const SPEEDS_SAVE_MS = 1000;

/**
 * How fast each endpoint answered lately (an exponentially weighted mean of attempt durations, ms), kept beyond its
 * lane's life so an endpoint that comes back with work is known at once. Bounded: the oldest entries go first. What
 * matters to fairness is the class (slow above SLOW_ATTEMPT_MS, else fast): an endpoint whose class is new or changed
 * is noted, to be saved for the workers that own its partition next (`takeChanged`, `learn`).
 */
export class EndpointSpeeds {
  private readonly means = new Map<string, number>();
  private readonly changed = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  get size(): number {
    return this.means.size;
  }

  record(endpointId: string, durationMs: number): void {
    const before = this.means.get(endpointId);
    const after = before === undefined ? durationMs : before * 0.7 + durationMs * 0.3;
    if (before === undefined || isSlow(before) !== isSlow(after)) this.changed.add(endpointId);
    this.set(endpointId, after);
  }

  /** What another worker learnt: taken only where this one has not seen the endpoint answer. */
  learn(endpointId: string, meanMs: number): void {
    if (!this.means.has(endpointId)) this.set(endpointId, meanMs);
  }

  /** The endpoints whose class is new or changed since the last call, with their means. */
  takeChanged(): { endpointId: string; meanMs: number }[] {
    const changed = [...this.changed].flatMap((endpointId) => {
      const meanMs = this.means.get(endpointId);
      return meanMs === undefined ? [] : [{ endpointId, meanMs }];
    });
    this.changed.clear();
    return changed;
  }

  /** The mean duration, or undefined when the endpoint has not answered here yet. */
  meanMs(endpointId: string): number | undefined {
    return this.means.get(endpointId);
  }

  private set(endpointId: string, meanMs: number): void {
    this.means.delete(endpointId);
    this.means.set(endpointId, meanMs);
    if (this.means.size > this.capacity) this.means.delete(this.means.keys().next().value!);
  }
}

function isSlow(meanMs: number): boolean {
  return meanMs > SLOW_ATTEMPT_MS;
}

/**
 * The speeds this worker knows and shares (migration 0042): endpoints whose class is new or changed are saved every
 * second for whoever owns their partition next, and the speeds other workers saved are read when partitions are
 * gained, so after a partition moves its endpoints' lanes are not of unknown speed (docs/delivery.md, "Fairness").
 */
export class SharedSpeeds {
  private readonly speeds = new EndpointSpeeds(SPEEDS_KEPT);
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: { services: Services; logger: Logger }) {}

  start(): void {
    this.timer = setInterval(() => void this.save(), SPEEDS_SAVE_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.save();
  }

  record(endpointId: string, durationMs: number): void {
    this.speeds.record(endpointId, durationMs);
  }

  /**
   * How a lane's attempts hold slots: slow (an attempt running over a second, or answers slower than that lately),
   * fast, or unknown (it has not answered here yet).
   */
  classOf(lane: Lane, realNow: number): 'slow' | 'fast' | 'unknown' {
    if (lane.holdsSlowAttempt(realNow)) return 'slow';
    const mean = this.speeds.meanMs(lane.id);
    if (mean === undefined) return lane.inFlight > 0 ? 'slow' : 'unknown';
    return isSlow(mean) ? 'slow' : 'fast';
  }

  /** Reads what other workers saved of the endpoints of partitions this worker just gained. */
  async learn(partitions: readonly number[]): Promise<void> {
    try {
      const known = await this.deps.services.ownership.knownSpeeds(partitions, SPEEDS_LEARNT_AT_MOST);
      for (const { endpointId, meanMs } of known) this.speeds.learn(endpointId, meanMs);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'reading endpoint speeds failed');
    }
  }

  private async save(): Promise<void> {
    const changed = this.speeds.takeChanged();
    if (changed.length === 0) return;
    try {
      await this.deps.services.ownership.saveSpeeds(changed);
    } catch (error) {
      // Only a later owner's first attempts pay for it: they learn the speeds again.
      this.deps.logger.warn({ err: error }, 'saving endpoint speeds failed');
    }
  }
}
