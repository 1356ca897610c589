import { SealedWithAnotherKey } from '../common/sealing.js';
import type { ClaimedAttempt } from '../engine/dispatch.service.js';
import type { FinishedDelivery } from './delivery-records.js';

/** What a claim's row (the push claim's, a stream's) says of the delivery it leased and of its endpoint. */
export interface ClaimedRow {
  endpoint_id: string;
  team_id: string;
  tenant_id: string;
  message_id: string;
  status: 'enabled' | 'paused' | 'disabled';
  deleted: boolean;
  /** The row leased, and the attempt it was leased for; `id` null: the delivery was gone (a stale queue row). */
  leased_id: string | null;
  leased_attempt: number | null;
  id: string | null;
  cancel_retries: boolean;
  expires_at: Date;
  body: Buffer | null;
  last_status_code: number | null;
}

export interface SortedClaim<R> {
  attempts: ClaimedAttempt[];
  /** Deliveries finished instead of attempted (expired, canceled, credentials unreadable). */
  finished: FinishedDelivery[];
  /** Queue rows whose delivery is gone. */
  stale: { id: string; fence: number }[];
  /** Rows whose secrets are sealed with another key: the claimer gives them back unsent. */
  sealedElsewhere: { row: R; error: SealedWithAnotherKey }[];
}

/**
 * Sorts a claim's rows, the push engine's (DispatchService.claim) and a stream's (stream-claim.ts) alike: each
 * leased delivery is attempted, or finished instead when it may not be (its message canceled, its window over, its
 * endpoint deleted or disabled, its content erased, its credentials unreadable), or given back when this process
 * holds another sealing key. `fenceOf`: the attempt number the claim leased the row for.
 */
export function sortClaimedRows<R extends ClaimedRow>(
  rows: readonly R[],
  now: Date,
  fenceOf: (row: R) => number,
  toAttempt: (row: R) => ClaimedAttempt,
): SortedClaim<R> {
  const sorted: SortedClaim<R> = { attempts: [], finished: [], stale: [], sealedElsewhere: [] };
  for (const row of rows) {
    if (row.leased_id !== null && row.id === null) sorted.stale.push({ id: row.leased_id, fence: row.leased_attempt! });
    if (row.id === null) continue;
    let reason = finishReason(row, now);
    if (!reason) {
      try {
        sorted.attempts.push(toAttempt(row));
        continue;
      } catch (error) {
        // Sealed with another key: this process has the wrong SVC_ENCRYPTION_KEY, the delivery is fine; it goes
        // back unsent for a process with the right key.
        if (error instanceof SealedWithAnotherKey) {
          sorted.sealedElsewhere.push({ row, error });
          continue;
        }
        // A sealed value of this key that does not open (damaged): no later claim can do better, so the delivery
        // fails now with a reason support can act on instead of being claimed again and again.
        reason = { status: 'failed', reason: 'credentials_unreadable' };
      }
    }
    sorted.finished.push({
      id: row.id,
      teamId: row.team_id,
      tenantId: row.tenant_id,
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      status: reason.status,
      attempts: fenceOf(row) - 1,
      lastStatusCode: row.last_status_code,
      reason: reason.reason,
      fence: fenceOf(row),
    });
  }
  return sorted;
}

function finishReason(row: ClaimedRow, now: Date): { status: FinishedDelivery['status']; reason: string } | null {
  // Its attempt died after the message was canceled or redacted: the retry it would get is canceled.
  if (row.cancel_retries) return { status: 'canceled', reason: 'message_canceled' };
  if (now >= row.expires_at) return { status: 'expired', reason: 'window_over' };
  if (row.deleted) return { status: 'canceled', reason: 'endpoint_deleted' };
  if (row.status === 'disabled') return { status: 'canceled', reason: 'endpoint_disabled' };
  // Content erased (redaction or retention): nothing left to send.
  if (row.body === null) return { status: 'canceled', reason: 'content_erased' };
  return null;
}
