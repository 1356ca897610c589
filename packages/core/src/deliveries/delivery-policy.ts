/**
 * The delivery rules as pure functions: what an attempt's outcome means for the delivery, and what it means for
 * the endpoint's circuit. No I/O, so every branch is tested directly (delivery-policy.test.ts).
 */

export const MAX_ATTEMPTS = 9;
export const CIRCUIT_FAILURE_THRESHOLD = 10;
export const FIRST_PROBE_WAIT_SECONDS = 60;
export const MAX_PROBE_WAIT_SECONDS = 3600;
/** Up to this fraction of each delay is added at random. */
export const RETRY_JITTER = 0.2;

export type AttemptTrigger = 'scheduled' | 'retry' | 'probe' | 'retry_now';

/** What happened to one attempt, as the engine classifies it. */
export type AttemptResult =
  | { kind: 'response'; status: number; retryAfterSeconds: number | null }
  | { kind: 'timeout' | 'network_error' | 'tls_error'; reason: string }
  | { kind: 'unsafe_destination'; reason: string; resolvesToPrivateAddress: boolean };

export type DeliveryDecision =
  | { status: 'succeeded' }
  | { status: 'failed'; reason: string; disableEndpoint: 'endpoint_gone' | 'unsafe_destination' | null }
  | { status: 'retry_wait'; nextAttemptAt: Date }
  | { status: 'expired'; reason: string };

export interface DecisionInput {
  result: AttemptResult;
  /** Attempts made so far, this one included. */
  attemptCount: number;
  retryDelaysSeconds: readonly number[];
  expiresAt: Date;
  now: Date;
  /** 0 to 1; the share of RETRY_JITTER to add (random in production, fixed in tests). */
  jitter: number;
}

export function isSuccess(result: AttemptResult): boolean {
  return result.kind === 'response' && result.status >= 200 && result.status < 300;
}

/** 408, 425, 429, 5xx and network errors or timeouts are retried; redirects and other 4xx are not. */
export function isRetryable(result: AttemptResult): boolean {
  if (result.kind === 'unsafe_destination') return false;
  if (result.kind !== 'response') return true;
  const { status } = result;
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/** A short description for the delivery record and events: a status code or an error kind, never a URL. */
export function describeResult(result: AttemptResult): string {
  return result.kind === 'response' ? `http_${result.status}` : result.kind;
}

/**
 * The delivery's next state after an attempt. Retries follow the endpoint's delays (the n-th retry waits the
 * n-th delay, the last one repeating is not allowed: with fewer delays, fewer attempts) plus up to 20%, and a
 * longer Retry-After on 429 or 503 wins. At most 9 attempts; no attempt starts at or after expires_at, so a retry
 * that would start then expires the delivery instead.
 */
export function decideAfterAttempt(input: DecisionInput): DeliveryDecision {
  const { result } = input;
  if (isSuccess(result)) return { status: 'succeeded' };
  if (result.kind === 'unsafe_destination')
    return {
      status: 'failed',
      reason: 'unsafe_destination',
      disableEndpoint: result.resolvesToPrivateAddress ? 'unsafe_destination' : null,
    };
  if (result.kind === 'response' && result.status === 410)
    return { status: 'failed', reason: 'http_410', disableEndpoint: 'endpoint_gone' };
  if (!isRetryable(result)) return { status: 'failed', reason: describeResult(result), disableEndpoint: null };
  const retryIndex = input.attemptCount - 1;
  const delay = input.retryDelaysSeconds[retryIndex];
  if (input.attemptCount >= MAX_ATTEMPTS || delay === undefined)
    return { status: 'failed', reason: `${describeResult(result)}_attempts_exhausted`, disableEndpoint: null };
  let waitMs = delay * 1000 * (1 + RETRY_JITTER * Math.min(1, Math.max(0, input.jitter)));
  if (result.kind === 'response' && (result.status === 429 || result.status === 503) && result.retryAfterSeconds)
    waitMs = Math.max(waitMs, result.retryAfterSeconds * 1000);
  const nextAttemptAt = new Date(input.now.getTime() + Math.ceil(waitMs));
  if (nextAttemptAt >= input.expiresAt) return { status: 'expired', reason: `${describeResult(result)}_window_over` };
  return { status: 'retry_wait', nextAttemptAt };
}

export type CircuitState = 'closed' | 'half_open' | 'open';

export interface EndpointHealthState {
  circuit: CircuitState;
  consecutiveFailures: number;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  nextProbeAt: Date | null;
  probeWaitSeconds: number;
  /**
   * The stored row's version as it was read (a bigint as a string; null or absent: no row read). Settlement writes
   * the circuit only while the row still has it (docs/delivery.md, "Circuits are fenced").
   */
  version?: string | null;
}

/** An endpoint with nothing against it: the circuit closed, no failures, the probe wait at its start. */
export const CLOSED_CIRCUIT: EndpointHealthState = {
  circuit: 'closed',
  consecutiveFailures: 0,
  lastSuccessAt: null,
  lastFailureAt: null,
  nextProbeAt: null,
  probeWaitSeconds: FIRST_PROBE_WAIT_SECONDS,
};

export interface HealthChange {
  health: EndpointHealthState;
  /** The circuit closed again after being open or half-open (event webhooks.endpoint.recovered). */
  recovered: boolean;
  opened: boolean;
}

/**
 * The circuit after one attempt. Ten consecutive failures open it for 1 minute; then one probe goes. A failed
 * probe doubles the wait up to an hour; a success (of the probe or of any attempt) closes it.
 */
export function healthAfterAttempt(
  health: EndpointHealthState,
  succeeded: boolean,
  trigger: AttemptTrigger,
  now: Date,
): HealthChange {
  if (succeeded) {
    return {
      health: {
        circuit: 'closed',
        consecutiveFailures: 0,
        lastSuccessAt: now,
        lastFailureAt: health.lastFailureAt,
        nextProbeAt: null,
        probeWaitSeconds: FIRST_PROBE_WAIT_SECONDS,
      },
      recovered: health.circuit !== 'closed',
      opened: false,
    };
  }
  const failures = health.consecutiveFailures + 1;
  if (trigger === 'probe' || health.circuit !== 'closed') {
    const wait =
      trigger === 'probe' && health.circuit !== 'closed'
        ? Math.min(MAX_PROBE_WAIT_SECONDS, health.probeWaitSeconds * 2)
        : health.probeWaitSeconds;
    return {
      health: {
        ...health,
        circuit: 'open',
        consecutiveFailures: failures,
        lastFailureAt: now,
        nextProbeAt: new Date(now.getTime() + wait * 1000),
        probeWaitSeconds: wait,
      },
      recovered: false,
      opened: false,
    };
  }
  if (failures >= CIRCUIT_FAILURE_THRESHOLD)
    return {
      health: {
        ...health,
        circuit: 'open',
        consecutiveFailures: failures,
        lastFailureAt: now,
        nextProbeAt: new Date(now.getTime() + FIRST_PROBE_WAIT_SECONDS * 1000),
        probeWaitSeconds: FIRST_PROBE_WAIT_SECONDS,
      },
      recovered: false,
      opened: true,
    };
  return { health: { ...health, consecutiveFailures: failures, lastFailureAt: now }, recovered: false, opened: false };
}
