import { deliveryReconcileJob } from '@svc/core';
import { defineJobHandler } from './job.js';

/**
 * The delivery engine's safety net (docs/delivery.md, "Reconciliation"), every minute in one worker: leases of dead
 * workers are freed, deliveries past their window expire, and pending deliveries that lost their queue row get it
 * back (and a number, on an ordered endpoint), and bulk replays whose job is gone (a worker killed on the job's last try) end failed. Each worker's
 * heartbeat does the first two every few seconds as well; this job covers a deployment whose workers all run
 * without it.
 */
export const deliveryReconcileHandler = defineJobHandler({
  contract: deliveryReconcileJob,
  concurrency: 1,
  async run(_payload, services) {
    await services.ownership.releaseOrphans();
    while ((await services.ownership.expireDue()) > 0);
    await services.ownership.restoreLostRows();
    await services.ownership.numberStrayRows();
    await services.ownership.cancelDisabledBacklogs();
    await services.replays.giveUpStranded();
    // Stream endpoints: leases of dead connections go back, unacknowledged ones past their timeout fail as timeouts.
    await services.streamDeliveries.sweep();
  },
});
