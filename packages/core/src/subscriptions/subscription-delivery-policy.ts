import { DAY, HOUR, MINUTE, SECOND } from '../common/clock.js';

/** Retries after 1, 5 and 15 minutes, then 1, 4, 12, 24 and 48 hours: nine attempts in all. */
export const SUBSCRIPTION_RETRY_DELAYS_MS = [
  1 * MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  1 * HOUR,
  4 * HOUR,
  12 * HOUR,
  24 * HOUR,
  48 * HOUR,
] as const;
export const MAX_SUBSCRIPTION_ATTEMPTS = SUBSCRIPTION_RETRY_DELAYS_MS.length + 1;
/** Receivers acknowledge with a 2xx within 10 seconds. */
export const ACKNOWLEDGE_TIMEOUT_MS = 10 * SECOND;
/** A claimed attempt's lease: longer than the timeout, shorter than the job's expiry. */
export const SUBSCRIPTION_LEASE_MS = 30 * SECOND;
/** A failing event blocks later events of its subscription for at most this long after its first failure. */
export const MAX_BLOCK_MS = DAY;
/** Deliveries, attempts and events are kept and listed this long. */
export const PLATFORM_HISTORY_MS = 30 * DAY;

/** What one attempt's answer means for its delivery (docs/platform.md, docs/event-subscription-chat-formats.md). */
export type SubscriptionVerdict =
  | { kind: 'succeeded' }
  | { kind: 'retry'; retryAfterSeconds: number | null; reason: string }
  | { kind: 'failed'; reason: string; disable: boolean };

/**
 * The standard format: any 2xx acknowledges; 410 Gone stops retries and disables the subscription (the receiver
 * says it is gone for good: docs/platform.md); anything else is retried on the schedule, a longer Retry-After on
 * 429 or 503 winning.
 */
export function svcVerdict(response: { status: number; retryAfterSeconds: number | null }): SubscriptionVerdict {
  if (response.status >= 200 && response.status < 300) return { kind: 'succeeded' };
  if (response.status === 410) return { kind: 'failed', reason: 'the receiver answered 410 Gone', disable: true };
  const honoursRetryAfter = response.status === 429 || response.status === 503;
  return {
    kind: 'retry',
    retryAfterSeconds: honoursRetryAfter ? response.retryAfterSeconds : null,
    reason: `the receiver answered ${response.status}`,
  };
}

/** When the next attempt goes after `attempts` failed ones (null: no more automatic attempts). */
export function nextAttemptDelayMs(attempts: number, retryAfterSeconds: number | null): number | null {
  const scheduled = SUBSCRIPTION_RETRY_DELAYS_MS[attempts - 1];
  if (scheduled === undefined) return null;
  const asked = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds * SECOND, 48 * HOUR);
  return Math.max(scheduled, asked);
}
