import type { ClaimedAttempt } from '../engine/dispatch.service.js';
import { CLOSED_CIRCUIT, type EndpointHealthState } from '../deliveries/delivery-policy.js';
import type { AttemptOutcome, SettlementResult } from '../engine/settlement.service.js';
import type { Services } from '../services.js';

/** The worker ID the step helpers claim and settle as (no worker process runs beside them in such tests). */
export const STEP_WORKER_ID = 'wkr_steps';

/**
 * The delivery engine one step at a time, for tests that drive attempts by hand: the claim an endpoint's owner
 * would make for these deliveries' endpoints, and the settlement of the outcomes the test chooses. The circuits
 * the claim read are kept for settlement, as the owner keeps them in memory.
 */
export class EngineSteps {
  private readonly health = new Map<string, EndpointHealthState>();

  constructor(private readonly services: Services) {}

  /** Claims these deliveries (those that are due, as their endpoints' limits allow) and returns their attempts. */
  async claim(deliveryIds: readonly string[]): Promise<ClaimedAttempt[]> {
    if (deliveryIds.length === 0) return [];
    // The steps claim as a worker of their own: with no worker process running, it owns every partition.
    await this.services.ownership.heartbeat(STEP_WORKER_ID);
    const rows: { endpoint_id: string; n: number }[] = await this.services.db.query(
      `SELECT endpoint_id, count(*)::int AS n FROM deliveries WHERE id = ANY($1::text[]) GROUP BY endpoint_id`,
      [deliveryIds],
    );
    const claimed = await this.services.dispatch.claim(
      STEP_WORKER_ID,
      rows.map((r) => ({ endpointId: r.endpoint_id, want: r.n, mine: 0 })),
      { onlyDeliveryIds: deliveryIds },
    );
    for (const lane of claimed.lanes) this.health.set(lane.endpointId, lane.health);
    const wanted = new Set(deliveryIds);
    return claimed.attempts.filter((a) => wanted.has(a.deliveryId));
  }

  async settle(outcomes: readonly AttemptOutcome[]): Promise<SettlementResult> {
    const settled = await this.services.settlement.settle(STEP_WORKER_ID, outcomes, (id) => this.healthOf(id));
    for (const [id, health] of settled.health) this.health.set(id, health);
    // A circuit whose row moved meanwhile: the next claim reads it again.
    for (const id of settled.stale) this.health.delete(id);
    // As the engine does after a batch that disabled endpoints (outside the settlement).
    if (settled.disabled.length > 0) await this.services.ownership.cancelDisabledBacklogs(settled.disabled);
    return settled;
  }

  private healthOf(endpointId: string): EndpointHealthState {
    return this.health.get(endpointId) ?? CLOSED_CIRCUIT;
  }
}
