import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { SealedWithAnotherKey } from '../common/sealing.js';
import { retryOnConflict } from '../common/transaction.js';
import type { NewOperationalEvent } from '../events/operational-event.types.js';
import type { Metrics } from '../metrics/metrics.js';

/** A delivery a claim leased and cannot send: its endpoint's secrets are sealed with another key than this process's. */
export interface MismatchedDelivery {
  deliveryId: string;
  endpointId: string;
  teamId: string;
  tenantId: string;
  /** The attempt number the claim leased the row with (the settlement fence). */
  fence: number;
  /** The key ID (hex) the sealed value names. */
  sealedKeyId: string;
}

/** A claimed row (the claim's own row type, narrowed) and the refusal its secrets met. */
export function mismatchedDelivery(
  row: { id: string | null; endpoint_id: string; team_id: string; tenant_id: string; attempt: number | null },
  error: SealedWithAnotherKey,
): MismatchedDelivery {
  return {
    deliveryId: row.id!,
    endpointId: row.endpoint_id,
    teamId: row.team_id,
    tenantId: row.tenant_id,
    fence: row.attempt!,
    sealedKeyId: error.sealedKeyId,
  };
}

/** What the worker hears: this process met secrets it cannot open and should stop claiming for a while. */
export interface KeyMismatchNotice {
  workerId: string;
  deliveries: number;
  sealedKeyIds: string[];
  workerKeyId: string;
}

/**
 * Hands the lease back: no attempt was made, so the row is as it was before the claim (not leased, its attempt
 * number back), due now so that whichever worker owns the endpoint next can take it. Fenced by (owner, attempt).
 */
const RELEASE_SQL = `
  UPDATE delivery_queue q SET lease_owner = NULL, attempt = q.attempt - 1, due_at = $3
    FROM unnest($1::text[], $4::int[]) AS r(delivery_id, fence)
   WHERE q.delivery_id = r.delivery_id AND q.lease_owner = $2 AND q.attempt = r.fence`;

/**
 * A changed or wrong SVC_ENCRYPTION_KEY is the process's fault, never the delivery's (docs/operations.md, "A secret
 * sealed with another key"). The claim hands such deliveries here instead of failing them: their leases are released
 * unsent, the metric svc_sealing_key_mismatches_total counts them, one webhooks.worker.sealing_key_mismatch event per
 * endpoint says why they wait, and the worker is told, so it stops claiming and its endpoints move to other workers.
 */
export class SealingKeyMismatches {
  private readonly listeners = new Set<(notice: KeyMismatchNotice) => void>();

  constructor(
    private readonly deps: {
      db: DataSource;
      clock: Clock;
      events: { emit(tx: DataSource['manager'], events: readonly NewOperationalEvent[]): Promise<void> };
      metrics: Metrics;
      /** This process's key ID (hex), for the event. */
      workerKeyId: string;
    },
  ) {}

  /** The worker's stand-down; returns the unsubscribe. */
  onMismatch(listener: (notice: KeyMismatchNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async release(workerId: string, deliveries: readonly MismatchedDelivery[]): Promise<void> {
    const { db, clock, events, metrics, workerKeyId } = this.deps;
    const now = clock.now();
    const byEndpoint = new Map<string, MismatchedDelivery[]>();
    for (const d of deliveries) byEndpoint.set(d.endpointId, [...(byEndpoint.get(d.endpointId) ?? []), d]);
    await retryOnConflict(() =>
      db.transaction(async (tx) => {
        await tx.query(RELEASE_SQL, [
          deliveries.map((d) => d.deliveryId),
          workerId,
          now,
          deliveries.map((d) => d.fence),
        ]);
        await events.emit(
          tx,
          [...byEndpoint.values()].map((group) => ({
            type: 'webhooks.worker.sealing_key_mismatch' as const,
            teamId: group[0]!.teamId,
            tenantId: group[0]!.tenantId,
            resourceId: group[0]!.endpointId,
            data: {
              endpoint_id: group[0]!.endpointId,
              worker_id: workerId,
              deliveries: group.length,
              sealed_key_id: group[0]!.sealedKeyId,
              worker_key_id: workerKeyId,
            },
          })),
        );
      }),
    );
    metrics.sealingKeyMismatches.inc(deliveries.length);
    const notice: KeyMismatchNotice = {
      workerId,
      deliveries: deliveries.length,
      sealedKeyIds: [...new Set(deliveries.map((d) => d.sealedKeyId))],
      workerKeyId,
    };
    for (const listener of this.listeners) listener(notice);
  }
}
