/** Delivery statuses as the API shows them (scheduled: not due yet and never attempted). */
export const DELIVERY_STATUSES = [
  'scheduled',
  'queued',
  'in_flight',
  'retry_wait',
  'succeeded',
  'failed',
  'expired',
  'canceled',
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export type DeliveryCounts = Record<DeliveryStatus, number>;

export const MESSAGE_STATUSES = [
  'scheduled',
  'queued',
  'delivering',
  'succeeded',
  'partially_failed',
  'failed',
  'canceled',
  'no_destinations',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export function emptyCounts(): DeliveryCounts {
  return { scheduled: 0, queued: 0, in_flight: 0, retry_wait: 0, succeeded: 0, failed: 0, expired: 0, canceled: 0 };
}

/**
 * A message's status, derived from its original deliveries (generation 0) only; replays never change it.
 * The rules, in order (docs/delivery.md):
 * 1. no original delivery: no_destinations;
 * 2. any original still pending: delivering once any of them was attempted or finished, else queued when any
 *    is due, else scheduled;
 * 3. all finished: canceled when every one was canceled; succeeded when some succeeded and none failed or
 *    expired; partially_failed when some succeeded and some failed or expired; failed otherwise.
 */
export function deriveMessageStatus(counts: DeliveryCounts): MessageStatus {
  const finished = counts.succeeded + counts.failed + counts.expired + counts.canceled;
  const pending = counts.scheduled + counts.queued + counts.in_flight + counts.retry_wait;
  if (finished + pending === 0) return 'no_destinations';
  if (pending > 0) {
    if (counts.in_flight + counts.retry_wait > 0 || finished > 0) return 'delivering';
    return counts.queued > 0 ? 'queued' : 'scheduled';
  }
  const unsuccessful = counts.failed + counts.expired;
  if (counts.canceled === finished) return 'canceled';
  if (counts.succeeded > 0) return unsuccessful > 0 ? 'partially_failed' : 'succeeded';
  return 'failed';
}
