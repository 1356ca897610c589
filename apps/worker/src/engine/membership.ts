import type { Logger } from 'pino';
import type { Services } from '@svc/core';

export interface MembershipOptions {
  services: Services;
  workerId: string;
  logger: Logger;
  heartbeatMs?: number;
  /** How often owned partitions are searched for endpoints with work (a backstop for lost wake-ups). */
  discoveryMs?: number;
  /** How often expiry and the release of dead workers' leases run. */
  housekeepingMs?: number;
  /** The partitions this worker owns changed (the live worker count too). */
  onMembership(partitions: ReadonlySet<number>, liveWorkers: number): void;
  /** Endpoints with rows in the queue, found by discovery. */
  onDiscovered(found: readonly { endpointId: string; nextDueAt: Date }[]): void;
  /** Partitions this worker just gained (their endpoints' speeds as earlier owners saved them are to be read). */
  onGained(partitions: readonly number[]): void;
}

/**
 * A worker's place among the workers (docs/delivery.md, "Endpoint ownership"), in three loops on timers of their
 * own: the heartbeat (membership and partition leases, every second), discovery (endpoints with work in the owned
 * partitions, every 10 s and when partitions are gained) and housekeeping (dead workers' leases, expiry, every 2 s).
 * Slow housekeeping never delays a heartbeat, so a busy worker neither loses its partitions nor looks dead.
 */
export class Membership {
  private partitions = new Set<number>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly busy = new Set<'beat' | 'discovery' | 'housekeeping'>();
  private stopped = false;

  constructor(private readonly options: MembershipOptions) {}

  async start(): Promise<void> {
    await this.beat();
    const every = (ms: number, run: () => Promise<void>) => {
      const timer = setInterval(() => void run(), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.options.heartbeatMs ?? 1000, () => this.beat());
    every(this.options.discoveryMs ?? 10_000, () => this.discover([...this.partitions]));
    every(this.options.housekeepingMs ?? 2000, () => this.housekeeping());
  }

  get owned(): ReadonlySet<number> {
    return this.partitions;
  }

  /** Stops the loops and gives up the partitions at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    await this.options.services.ownership.leave(this.options.workerId).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'leaving the dispatch partitions failed');
    });
  }

  /** A discovery pass over every owned partition now (a wake-up without a payload). */
  discoverAll(): void {
    void this.discover([...this.partitions]);
  }

  private async beat(): Promise<void> {
    await this.exclusive('beat', async () => {
      const membership = await this.options.services.ownership.heartbeat(this.options.workerId);
      const before = this.partitions;
      this.partitions = new Set(membership.partitions);
      this.options.onMembership(this.partitions, Math.max(1, membership.liveWorkers));
      const gained = membership.partitions.filter((p) => !before.has(p));
      if (gained.length > 0) {
        this.options.onGained(gained);
        void this.discover(gained);
      }
    });
  }

  /** Partitions asked for while a pass ran: they get their own pass right after (a gained partition is never missed). */
  private readonly toDiscover = new Set<number>();

  private async discover(partitions: number[]): Promise<void> {
    for (const p of partitions) this.toDiscover.add(p);
    while (this.toDiscover.size > 0 && !this.busy.has('discovery') && !this.stopped) {
      const batch = [...this.toDiscover].filter((p) => this.partitions.has(p));
      this.toDiscover.clear();
      if (batch.length === 0) return;
      await this.exclusive('discovery', async () => {
        this.options.onDiscovered(await this.options.services.ownership.discover(batch));
      });
    }
  }

  private async housekeeping(): Promise<void> {
    await this.exclusive('housekeeping', async () => {
      await this.options.services.ownership.releaseOrphans();
      await this.options.services.ownership.expireDue();
      // Scheduled deliveries of ordered endpoints that came due get their numbers (and their owners a wake-up).
      await this.options.services.ownership.numberStrayRows();
    });
  }

  /** One run of a loop at a time; a failure is logged and the loop goes on at its next turn. */
  private async exclusive(loop: 'beat' | 'discovery' | 'housekeeping', run: () => Promise<void>): Promise<void> {
    if (this.stopped || this.busy.has(loop)) return;
    this.busy.add(loop);
    try {
      await run();
    } catch (error) {
      if (!this.stopped) this.options.logger.error({ err: error }, `dispatch ${loop} failed`);
    } finally {
      this.busy.delete(loop);
    }
  }
}
