import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { SvcApiError } from './errors.js';
import { AckBatcher, AckRefused, type AckResult } from './stream-acks.js';

/** One delivery of a stream endpoint, as the service would have POSTed it. */
export interface StreamDelivery {
  deliveryId: string;
  messageId: string;
  attempt: number;
  eventType: string;
  /** The request headers of a push delivery: Standard Webhooks, `Svc-*`, the endpoint's custom headers. */
  headers: Record<string, string>;
  /** The exact body bytes (verify the signature over these). */
  body: Uint8Array<ArrayBuffer>;
  /** The SSE event ID: the cursor a reconnect resumes from. */
  cursor: string | undefined;
}

/** What the handler made of one delivery, reported once its acknowledgement is queued. */
export interface DeliveryOutcome {
  delivery: StreamDelivery;
  /** The handler's HTTP status, or `error` when it gave none (refused connection, timeout, a thrown error). */
  status: number | 'error';
  /** Why the handler gave no status. */
  error?: string;
  receivedAt: Date;
  latencyMs: number;
}

/** The connection's life, for a program that prints it. */
export type ConnectionEvent =
  | { type: 'connected'; resumedFrom: string | undefined }
  | { type: 'disconnected'; reason: string; retryInMs: number }
  | { type: 'ack-error'; message: string }
  | { type: 'ack-result'; deliveryId: string; result: AckResult };

export interface ListenOptions {
  /** The REST base URL, `/v1` included: `http://localhost:3000/v1`. */
  baseUrl: string;
  endpointId: string;
  /** The endpoint's stream token (`whst_...`); never a team key. */
  token: string;
  /**
   * Where each delivery goes: a URL it is POSTed to with its headers and exact bytes, or a function; the status it
   * answers is the acknowledgement (2xx settles the delivery; anything else is a failed attempt, retried).
   */
  forward: string | ((delivery: StreamDelivery) => Promise<{ status: number }>);
  onDelivery?: (outcome: DeliveryOutcome) => void;
  onConnection?: (event: ConnectionEvent) => void;
  /**
   * Aborting it stops listening: no new delivery is taken, the ones the handler is on get a moment (2 s) to finish and
   * are acknowledged before the connection closes (the service offers again what a closed stream held
   * unacknowledged); then the promise resolves.
   */
  signal?: AbortSignal;
  /** The fetch for the service's stream and acknowledgements, and for forwarding (default: the global fetch). */
  fetch?: typeof fetch;
  /** How long a forwarded request may take before it counts as `error` (default 30 s). */
  forwardTimeoutMs?: number;
  /** Silence (no event, no heartbeat) after which the connection counts as lost (default 45 s; heartbeats are 15 s). */
  idleTimeoutMs?: number;
  /** First and longest pause between reconnects (default 500 ms and 30 s; doubled each failure, with jitter). */
  reconnectDelayMs?: { initial: number; max: number };
  /** Acknowledgements per request (1..100, default 100) and how long one waits for company (default 50 ms). */
  ackBatch?: { max: number; lingerMs: number };
}

/** Answers that reconnecting cannot change: a bad or revoked token, an unknown or push endpoint. */
const FATAL_STATUSES = new Set([400, 401, 403, 404, 409, 410, 422]);
/** Hop-by-hop and length headers belong to the connection, not the delivery: fetch sets its own. */
const CONNECTION_HEADERS = new Set(['connection', 'content-length', 'host', 'keep-alive', 'transfer-encoding']);
/** A connection that lived this long had a working stream: the next reconnect starts from the shortest pause. */
const HEALTHY_CONNECTION_MS = 10_000;
/** How long a stop waits for the handler's answers in progress, and then for their acknowledgements. */
const STOP_GRACE_MS = 2000;

interface DeliveryEventData {
  delivery_id: string;
  message_id: string;
  attempt: number;
  event_type: string;
  headers: Record<string, string>;
  body?: string;
  body_base64?: string;
}

/**
 * Receives a stream endpoint's deliveries (docs/streams.md): opens `GET /endpoints/{id}/stream`, hands each delivery
 * to `forward`, acknowledges it with the status `forward` answered (batched), and reconnects after a lost connection
 * with back-off (sending `Last-Event-ID`; the service offers again what was not acknowledged either way). Resolves
 * when `signal` aborts; rejects with SvcApiError when the service refuses the stream for good (401: a bad or revoked
 * token, or another endpoint's).
 */
export async function listen(options: ListenOptions): Promise<void> {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  const signal = options.signal ?? new AbortController().signal;
  const base = `${options.baseUrl.replace(/\/+$/, '')}/endpoints/${encodeURIComponent(options.endpointId)}`;
  const auth = { authorization: `Bearer ${options.token}` };
  const reconnect = options.reconnectDelayMs ?? { initial: 500, max: 30_000 };
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  let fatal: SvcApiError | undefined;
  // Stops the connection that is open when the acknowledgements learn the token is gone.
  let stopConnection: ((error: SvcApiError) => void) | undefined;

  const acks = new AckBatcher({
    maxBatch: options.ackBatch?.max,
    lingerMs: options.ackBatch?.lingerMs,
    async send(batch) {
      const response = await send(`${base}/stream/acks`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ acks: batch }),
      });
      if (!response.ok) {
        const error = await apiError(response);
        if (response.status >= 500 || response.status === 429) throw error;
        fatal ??= error;
        stopConnection?.(error);
        throw new AckRefused(response);
      }
      const { results } = (await response.json()) as { results: { delivery_id: string; result: AckResult }[] };
      return new Map(results.map((result) => [result.delivery_id, result.result]));
    },
    onError: (error) =>
      options.onConnection?.({ type: 'ack-error', message: error instanceof Error ? error.message : String(error) }),
    onResult: (ack, result) => options.onConnection?.({ type: 'ack-result', deliveryId: ack.delivery_id, result }),
  });
  const inFlight = new Set<Promise<void>>();

  async function handle(delivery: StreamDelivery): Promise<void> {
    const receivedAt = new Date();
    const started = performance.now();
    let status: number | 'error';
    let error: string | undefined;
    try {
      status = await forwardDelivery(delivery);
    } catch (caught) {
      status = 'error';
      error = describe(caught);
    }
    const latencyMs = performance.now() - started;
    acks.add({ delivery_id: delivery.deliveryId, attempt: delivery.attempt, status });
    options.onDelivery?.({ delivery, status, ...(error === undefined ? {} : { error }), receivedAt, latencyMs });
  }

  async function forwardDelivery(delivery: StreamDelivery): Promise<number> {
    const timeout = AbortSignal.timeout(options.forwardTimeoutMs ?? 30_000);
    if (typeof options.forward === 'function') {
      const answer = await Promise.race([options.forward(delivery), aborted(timeout)]);
      return answer.status;
    }
    const headers = Object.fromEntries(
      Object.entries(delivery.headers).filter(([name]) => !CONNECTION_HEADERS.has(name.toLowerCase())),
    );
    const response = await send(options.forward, {
      method: 'POST',
      headers,
      body: delivery.body,
      redirect: 'manual',
      // Not the caller's signal: a stop lets the handler finish, and its answer is acknowledged.
      signal: timeout,
    });
    await response.body?.cancel();
    return response.status;
  }

  let lastEventId: string | undefined;
  let failures = 0;
  try {
    while (!signal.aborted && !fatal) {
      const opened = Date.now();
      let reason: string;
      try {
        reason = await readStream();
      } catch (error) {
        if (error instanceof SvcApiError && FATAL_STATUSES.has(error.status)) throw error;
        if (signal.aborted) break;
        reason = describe(error);
        if (error instanceof SvcApiError && error.retryAfter !== undefined) failures = Math.max(failures, 1);
      }
      if (fatal) throw fatal;
      if (signal.aborted) break;
      if (Date.now() - opened >= HEALTHY_CONNECTION_MS) failures = 0;
      const pause = Math.min(reconnect.max, reconnect.initial * 2 ** failures);
      const retryInMs = Math.round(pause / 2 + Math.random() * (pause / 2));
      failures += 1;
      options.onConnection?.({ type: 'disconnected', reason, retryInMs });
      await sleep(retryInMs, signal);
    }
  } finally {
    // Normally sent already, before the last connection closed (drain); this is for a stop between connections.
    await Promise.race([acks.flush(), sleep(STOP_GRACE_MS)]);
    acks.close();
  }

  /** On a stop, while the connection is still open: the handler's answers so far, acknowledged. */
  async function drain(): Promise<void> {
    await Promise.race([Promise.allSettled(inFlight), sleep(STOP_GRACE_MS)]);
    await Promise.race([acks.flush(), sleep(STOP_GRACE_MS)]);
  }

  /** One connection, until it ends: resolves with why it ended; throws SvcApiError for a refusal. */
  async function readStream(): Promise<string> {
    const connection = new AbortController();
    stopConnection = (error) => connection.abort(error);
    // A stop takes no new delivery, acknowledges what the handler answered, and only then closes the connection:
    // closing first would hand what it held back to the service, and those acknowledgements would come too late.
    let stopping = false;
    const stopGracefully = () => {
      stopping = true;
      void drain().finally(() => connection.abort(new Error('stopped')));
    };
    if (signal.aborted) return 'stopped';
    signal.addEventListener('abort', stopGracefully, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const heard = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error(`no data for ${idleTimeoutMs} ms`)), idleTimeoutMs);
    };
    try {
      const response = await send(`${base}/stream`, {
        headers: {
          ...auth,
          accept: 'text/event-stream',
          ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
        },
        signal: connection.signal,
      });
      if (!response.ok || !response.body) throw await apiError(response);
      options.onConnection?.({ type: 'connected', resumedFrom: lastEventId });
      heard();
      let serverError: string | undefined;
      const parser = createParser({
        onEvent(event) {
          heard();
          if (stopping) return; // not taken: the service offers it again once this stream closes
          if (event.event === 'delivery') {
            const delivery = toDelivery(event);
            if (event.id !== undefined) lastEventId = event.id;
            const work: Promise<void> = handle(delivery).finally(() => inFlight.delete(work));
            inFlight.add(work);
          } else if (event.event === 'error') serverError = describeServerError(event.data);
        },
        onComment: heard,
        // A line past 64 MiB is not a delivery the service sends: the connection is dropped and made again.
        maxBufferSize: 64 * 1024 * 1024,
        onError: (error) => connection.abort(error),
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      } finally {
        reader.releaseLock();
      }
      return serverError ?? 'the service closed the stream';
    } catch (error) {
      if (connection.signal.aborted) {
        const reason: unknown = connection.signal.reason;
        if (reason instanceof SvcApiError) throw reason;
        return describe(reason);
      }
      throw error;
    } finally {
      clearTimeout(idle);
      signal.removeEventListener('abort', stopGracefully);
      stopConnection = undefined;
      connection.abort();
    }
  }
}

function toDelivery(event: EventSourceMessage): StreamDelivery {
  const data = JSON.parse(event.data) as DeliveryEventData;
  const body =
    data.body_base64 !== undefined
      ? Uint8Array.from(atob(data.body_base64), (char) => char.charCodeAt(0))
      : new TextEncoder().encode(data.body ?? '');
  return {
    deliveryId: data.delivery_id,
    messageId: data.message_id,
    attempt: data.attempt,
    eventType: data.event_type,
    headers: data.headers,
    body,
    cursor: event.id,
  };
}

function describeServerError(data: string): string {
  try {
    const { code, message } = JSON.parse(data) as { code?: string; message?: string };
    return `the service ended the stream: ${message ?? code ?? data}${code && message ? ` (${code})` : ''}`;
  } catch {
    return `the service ended the stream: ${data}`;
  }
}

async function apiError(response: Response): Promise<SvcApiError> {
  const body: unknown = await response.json().catch(() => undefined);
  return new SvcApiError(response, body);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch's "fetch failed" says nothing; its cause (ECONNREFUSED 127.0.0.1:3000) does.
  const cause: unknown = error.cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
