import { describe, expect, it } from 'vitest';
import {
  CIRCUIT_FAILURE_THRESHOLD,
  decideAfterAttempt,
  healthAfterAttempt,
  isRetryable,
  MAX_ATTEMPTS,
  type AttemptResult,
  type EndpointHealthState,
} from './delivery-policy.js';

const now = new Date('2026-11-02T10:00:00Z');
const hours = (n: number) => new Date(now.getTime() + n * 3_600_000);
const response = (status: number, retryAfterSeconds: number | null = null): AttemptResult => ({
  kind: 'response',
  status,
  retryAfterSeconds,
});
const decide = (
  result: AttemptResult,
  attemptCount = 1,
  extra: Partial<Parameters<typeof decideAfterAttempt>[0]> = {},
) =>
  decideAfterAttempt({
    result,
    attemptCount,
    retryDelaysSeconds: [15, 60, 300],
    expiresAt: hours(72),
    now,
    jitter: 0,
    ...extra,
  });

describe('an attempt outcome decides the delivery', () => {
  it('any 2xx succeeds', () => {
    for (const status of [200, 201, 204, 299]) expect(decide(response(status)).status).toBe('succeeded');
  });

  it('408, 425, 429, 5xx, network errors and timeouts are retried; redirects and other 4xx fail at once', () => {
    for (const status of [408, 425, 429, 500, 502, 503, 599]) expect(isRetryable(response(status))).toBe(true);
    for (const kind of ['timeout', 'network_error', 'tls_error'] as const)
      expect(isRetryable({ kind, reason: 'x' })).toBe(true);
    for (const status of [301, 302, 307, 400, 401, 404, 422]) {
      expect(isRetryable(response(status))).toBe(false);
      expect(decide(response(status))).toMatchObject({ status: 'failed', disableEndpoint: null });
    }
  });

  it('410 fails and disables the endpoint (endpoint_gone); a private destination disables with its own reason', () => {
    expect(decide(response(410))).toMatchObject({ status: 'failed', disableEndpoint: 'endpoint_gone' });
    const unsafe: AttemptResult = { kind: 'unsafe_destination', reason: 'x', resolvesToPrivateAddress: true };
    expect(decide(unsafe)).toMatchObject({ status: 'failed', disableEndpoint: 'unsafe_destination' });
    const serviceHost: AttemptResult = { kind: 'unsafe_destination', reason: 'x', resolvesToPrivateAddress: false };
    expect(decide(serviceHost)).toMatchObject({ status: 'failed', disableEndpoint: null });
  });

  it('the n-th retry waits the n-th delay plus up to 20%', () => {
    expect(decide(response(500), 1)).toEqual({ status: 'retry_wait', nextAttemptAt: new Date(now.getTime() + 15_000) });
    expect(decide(response(500), 2, { jitter: 1 })).toEqual({
      status: 'retry_wait',
      nextAttemptAt: new Date(now.getTime() + 72_000),
    });
  });

  it('a longer Retry-After on 429 or 503 wins; a shorter one, or one on another status, does not', () => {
    expect(decide(response(429, 600))).toEqual({
      status: 'retry_wait',
      nextAttemptAt: new Date(now.getTime() + 600_000),
    });
    expect(decide(response(503, 600))).toEqual({
      status: 'retry_wait',
      nextAttemptAt: new Date(now.getTime() + 600_000),
    });
    expect(decide(response(429, 5))).toEqual({ status: 'retry_wait', nextAttemptAt: new Date(now.getTime() + 15_000) });
    expect(decide(response(500, 600))).toEqual({
      status: 'retry_wait',
      nextAttemptAt: new Date(now.getTime() + 15_000),
    });
  });

  it('fails when the delays run out or at the 9th attempt', () => {
    expect(decide(response(500), 4).status).toBe('failed');
    const eight = Array.from({ length: 8 }, () => 1);
    expect(decide(response(500), MAX_ATTEMPTS - 1, { retryDelaysSeconds: eight }).status).toBe('retry_wait');
    expect(decide(response(500), MAX_ATTEMPTS, { retryDelaysSeconds: [...eight, 1] }).status).toBe('failed');
  });

  it('expires instead of retrying at or after expires_at', () => {
    expect(decide(response(500), 1, { expiresAt: new Date(now.getTime() + 15_000) }).status).toBe('expired');
    expect(decide(response(500), 1, { expiresAt: new Date(now.getTime() + 15_001) }).status).toBe('retry_wait');
  });
});

describe('the circuit', () => {
  const closed: EndpointHealthState = {
    circuit: 'closed',
    consecutiveFailures: 0,
    lastSuccessAt: null,
    lastFailureAt: null,
    nextProbeAt: null,
    probeWaitSeconds: 60,
  };

  it('opens for a minute at the tenth consecutive failure', () => {
    let health = closed;
    for (let i = 1; i < CIRCUIT_FAILURE_THRESHOLD; i += 1) {
      const change = healthAfterAttempt(health, false, 'scheduled', now);
      expect(change.health.circuit).toBe('closed');
      health = change.health;
    }
    const opened = healthAfterAttempt(health, false, 'retry', now);
    expect(opened).toMatchObject({ opened: true, health: { circuit: 'open', consecutiveFailures: 10 } });
    expect(opened.health.nextProbeAt).toEqual(new Date(now.getTime() + 60_000));
  });

  it('a failed probe doubles the wait up to an hour; a success closes it and reports the recovery', () => {
    let health: EndpointHealthState = {
      ...closed,
      circuit: 'half_open',
      consecutiveFailures: 10,
      probeWaitSeconds: 60,
    };
    const waits: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      health = healthAfterAttempt(health, false, 'probe', now).health;
      waits.push(health.probeWaitSeconds);
    }
    expect(waits).toEqual([120, 240, 480, 960, 1920, 3600, 3600, 3600]);
    expect(health.circuit).toBe('open');
    const recovered = healthAfterAttempt(health, true, 'probe', now);
    expect(recovered).toMatchObject({ recovered: true, health: { circuit: 'closed', consecutiveFailures: 0 } });
    expect(healthAfterAttempt(closed, true, 'scheduled', now).recovered).toBe(false);
  });
});
