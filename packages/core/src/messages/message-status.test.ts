import { describe, expect, it } from 'vitest';
import { deriveMessageStatus, emptyCounts, type DeliveryCounts } from './message-status.js';

const counts = (values: Partial<DeliveryCounts>): DeliveryCounts => ({ ...emptyCounts(), ...values });

describe('message status from its original deliveries', () => {
  it.each([
    ['no deliveries at all', {}, 'no_destinations'],
    ['every delivery waits for a later deliver_at', { scheduled: 2 }, 'scheduled'],
    ['some due, some later, none attempted', { scheduled: 1, queued: 1 }, 'queued'],
    ['all due, none attempted', { queued: 3 }, 'queued'],
    ['one attempt running', { queued: 1, in_flight: 1 }, 'delivering'],
    ['waiting for a retry', { retry_wait: 1 }, 'delivering'],
    ['one finished, one still queued', { succeeded: 1, queued: 1 }, 'delivering'],
    ['one failed, one scheduled', { failed: 1, scheduled: 1 }, 'delivering'],
    ['all succeeded', { succeeded: 2 }, 'succeeded'],
    ['succeeded and canceled', { succeeded: 1, canceled: 1 }, 'succeeded'],
    ['succeeded and failed', { succeeded: 1, failed: 1 }, 'partially_failed'],
    ['succeeded and expired', { succeeded: 1, expired: 1 }, 'partially_failed'],
    ['all failed', { failed: 2 }, 'failed'],
    ['failed and expired', { failed: 1, expired: 1 }, 'failed'],
    ['expired and canceled', { expired: 1, canceled: 1 }, 'failed'],
    ['all canceled', { canceled: 3 }, 'canceled'],
  ] as const)('%s', (_name, values, status) => {
    expect(deriveMessageStatus(counts(values))).toBe(status);
  });
});
