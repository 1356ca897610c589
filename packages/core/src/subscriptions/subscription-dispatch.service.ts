import type { DataSource } from 'typeorm';
import type { EgressOutcome } from '@svc/egress';
import type { Clock } from '../common/clock.js';
import type { Sealer } from '../common/sealing.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { leaseDelivery, toClaimedAttempt, type ClaimedSubscriptionAttempt } from './subscription-claim.js';
import type { SubscriptionVerdict } from './subscription-delivery-policy.js';
import { followLease, releaseIfBlockedTooLong } from './subscription-order.js';
import { attemptVerdict, settleAttempt } from './subscription-settle.js';
import { sweepSubscriptionDeliveries, type SubscriptionSweepReport } from './subscription-sweep.js';

export interface SubscriptionAttemptOutcome {
  claimed: ClaimedSubscriptionAttempt;
  sent: EgressOutcome;
}

export interface SubscriptionDispatchDeps {
  db: DataSource;
  clock: Clock;
  sealer: Sealer;
  jobs: JobQueue;
  /** The console's address for links in chat summaries (null: no links). */
  consoleUrl: string | null;
}

/**
 * The ordered delivery engine of event subscriptions. A delivery may go when it is due, not leased, and either
 * first among its subscription's pending ordered deliveries (commit order) or out of the order (a manual retry,
 * or one that blocked for 24 hours). Claim, attempt and settle follow the webhook engine: a lease in Postgres, the
 * same egress client, one transaction per settlement that also queues whatever became eligible. The claim is in
 * subscription-claim.ts, the settlement in subscription-settle.ts, the order's jobs in subscription-order.ts and the
 * history's sweep in subscription-sweep.ts.
 */
export class SubscriptionDispatchService {
  constructor(private readonly deps: SubscriptionDispatchDeps) {}

  async claim(deliveryId: string): Promise<ClaimedSubscriptionAttempt | null> {
    const now = this.deps.clock.now();
    const row = await this.deps.db.transaction(async (tx) => {
      await releaseIfBlockedTooLong(tx, this.deps.jobs, deliveryId, now);
      const leased = await leaseDelivery(tx, deliveryId, now);
      if (leased) return leased;
      await followLease(tx, this.deps.jobs, deliveryId, now);
      return null;
    });
    return row ? toClaimedAttempt(row, this.deps.sealer, this.deps.consoleUrl, now) : null;
  }

  /** What the answer means, per format. */
  verdict(claimed: ClaimedSubscriptionAttempt, sent: EgressOutcome): SubscriptionVerdict {
    return attemptVerdict(claimed, sent);
  }

  /** Records the attempt and moves the delivery on, in one transaction (docs/platform.md, "Delivery"). */
  async settle(outcome: SubscriptionAttemptOutcome): Promise<SubscriptionVerdict> {
    const { claimed, sent } = outcome;
    const verdict = this.verdict(claimed, sent);
    const now = this.deps.clock.now();
    await this.deps.db.transaction((tx) => settleAttempt(tx, this.deps, claimed, sent, verdict, now));
    return verdict;
  }

  /**
   * The safety net (every minute): releases blocks past 24 hours whose release job was lost, queues deliveries
   * that may go but have had no job for two minutes, ends deliveries still pending after 30 days, and purges
   * history past 30 days in batches.
   */
  async sweep(): Promise<SubscriptionSweepReport> {
    return sweepSubscriptionDeliveries(this.deps);
  }
}
