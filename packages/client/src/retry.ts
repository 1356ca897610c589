import { retryAfterSeconds } from './errors.js';

export interface RetryPolicy {
  /** Retries after the first try (default 2). */
  retries: number;
  /** The longest Retry-After the client waits; a longer one is answered to the caller at once (default 30). */
  maxRetryAfterSeconds: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 2, maxRetryAfterSeconds: 30 };

/**
 * A fetch that retries what the contract says to retry: 429 (rate_limited, queue_full), 503
 * (temporarily_unavailable) and a 409 carrying Retry-After (request_in_progress), each after its Retry-After, or
 * 1, 2, 4 ... seconds when it has none. The request goes again as it was, headers included, so a POST keeps its
 * Idempotency-Key and the service answers a retry of work it already did with the first response.
 */
export function retryingFetch(
  send: (request: Request) => Promise<Response>,
  policy: RetryPolicy,
): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let retry = 0; ; retry += 1) {
      const response = await send(request.clone());
      const wait = retry < policy.retries ? retryDelaySeconds(response, retry) : undefined;
      if (wait === undefined || wait > policy.maxRetryAfterSeconds) return response;
      await response.body?.cancel();
      await sleep(wait * 1000, request.signal);
    }
  };
}

function retryDelaySeconds(response: Response, retry: number): number | undefined {
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  if (response.status === 429 || response.status === 503) return retryAfter ?? 2 ** retry;
  if (response.status === 409) return retryAfter;
  return undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal.addEventListener('abort', abort, { once: true });
  });
}
