// The delivery HTTP client: one POST per attempt through the pinned connector, no redirects followed, a
// total deadline over connect, headers and body, at most 4 KiB of response body kept, no decompression.
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { ConnectionTracker, traceRequest } from './connection-trace.js';
import { createDnsLookup } from './dns-lookup.js';
import { classifyFailure } from './egress-errors.js';
import { describeFailure, type FailureDetail } from './failure-detail.js';
import type { UrlPolicy } from './host-policy.js';
import { createPinnedConnector } from './pinned-connector.js';
import type { LookupFn } from './resolve.js';
import { parseRetryAfter } from './retry-after.js';

/** The most response body bytes kept (and read) per attempt. */
export const MAX_RESPONSE_BODY_BYTES = 4096;

export interface EgressClientOptions {
  readonly policy: UrlPolicy;
  /** Name resolution; c-ares (createDnsLookup) by default. Tests inject a fixed table. */
  readonly lookup?: LookupFn;
  /** For the default lookup: the time one name may take. Default 5,000 ms. */
  readonly dnsTimeoutMs?: number;
  /** TCP connect plus TLS handshake, per new connection (the request deadline bounds it too). Default 10,000. */
  readonly connectTimeoutMs?: number;
  /** Open connections per origin (scheme, host, port). Default 64. */
  readonly maxSocketsPerOrigin?: number;
  /** How long an idle keep-alive connection is kept (a receiver's Keep-Alive hint may shorten it). Default 4,000. */
  readonly keepAliveTimeoutMs?: number;
  /** Extra trusted certificate authorities (tests, private CAs). */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** Wall clock in ms, for Retry-After dates. Default Date.now. */
  readonly now?: () => number;
}

export interface EgressRequest {
  /** The endpoint URL exactly as stored (its query is secret: it never appears in an outcome). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** The endpoint's timeout_seconds in ms: the whole attempt, from connect to the last body byte read. */
  readonly timeoutMs: number;
}

export type EgressOutcome =
  | {
      kind: 'response';
      status: number;
      /** From Retry-After (seconds or HTTP-date) on any status; null when absent or malformed. */
      retryAfterSeconds: number | null;
      /** The first bytes of the response body, at most MAX_RESPONSE_BODY_BYTES, never decompressed. */
      body: Buffer;
      durationMs: number;
    }
  | {
      kind: 'unsafe_destination';
      reason: string;
      /** True when the host is or resolves to a non-global address: the spec disables the endpoint. */
      resolvesToPrivateAddress: boolean;
      durationMs: number;
      /** Where it was refused and which address; null when the URL itself could not be used. */
      detail: FailureDetail | null;
    }
  | { kind: 'timeout' | 'network_error' | 'tls_error'; reason: string; durationMs: number; detail: FailureDetail };

export interface EgressClient {
  post(request: EgressRequest): Promise<EgressOutcome>;
  /** Waits for requests in flight, then closes every connection. */
  close(): Promise<void>;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_SOCKETS_PER_ORIGIN = 64;
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000;

/** Reads at most `limit` bytes, then destroys the body (which closes its connection); consumes short bodies. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      // Leaving the loop destroys the stream; a body of exactly `limit` bytes still ends normally and keeps
      // its connection for reuse.
      if (size > limit) break;
    }
  } finally {
    body.destroy();
  }
  const all = Buffer.concat(chunks);
  return all.length > limit ? Buffer.from(all.subarray(0, limit)) : all;
}

const ABORTED = Symbol('aborted');

/**
 * A total deadline that ends with the attempt: unlike AbortSignal.timeout, its timer is cleared when the attempt
 * finishes, so a finished attempt leaves no timer, listener or pending promise behind for the rest of its timeout
 * (at a thousand attempts a second with a 30 s timeout, that was 30,000 of each, and a DOMException per attempt).
 */
function startDeadline(timeoutMs: number): {
  signal: AbortSignal;
  aborted: Promise<typeof ABORTED>;
  clear(): void;
} {
  const controller = new AbortController();
  let fire: () => void = () => undefined;
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    fire = () => resolve(ABORTED);
  });
  const timer = setTimeout(() => {
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    fire();
  }, timeoutMs);
  return { signal: controller.signal, aborted, clear: () => clearTimeout(timer) };
}

function parseHttpUrl(raw: string): URL | null {
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

function portOf(url: URL): number {
  return url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
}

export function createEgressClient(options: EgressClientOptions): EgressClient {
  const { policy } = options;
  const now = options.now ?? Date.now;
  const lookup = options.lookup ?? createDnsLookup({ timeoutMs: options.dnsTimeoutMs });
  const tracker = new ConnectionTracker();
  const agent = new Agent({
    connect: createPinnedConnector({
      policy,
      lookup,
      tracker,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    }),
    connections: options.maxSocketsPerOrigin ?? DEFAULT_MAX_SOCKETS_PER_ORIGIN,
    pipelining: 1,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    keepAliveMaxTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  });

  async function post(request: EgressRequest): Promise<EgressOutcome> {
    if (!Number.isSafeInteger(request.timeoutMs) || request.timeoutMs <= 0) {
      throw new RangeError('timeoutMs must be a positive integer of milliseconds');
    }
    if (!Buffer.isBuffer(request.body)) throw new TypeError('body must be a Buffer of the exact bytes to send');
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);

    // The URL was checked when it was stored. Its host is checked again by the connector, for every new
    // connection, because the policy and DNS may have changed since.
    const url = parseHttpUrl(request.url);
    if (url === null) {
      return {
        kind: 'unsafe_destination',
        reason: 'url is not an absolute http(s) URL',
        resolvesToPrivateAddress: false,
        durationMs: elapsed(),
        detail: null,
      };
    }

    const deadline = startDeadline(request.timeoutMs);
    const traced = traceRequest(tracker, request.body);
    let firstByteMs: number | null = null;
    try {
      const pending = agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...request.headers },
        body: traced.body,
        signal: deadline.signal,
        headersTimeout: request.timeoutMs,
        bodyTimeout: request.timeoutMs,
      });
      // undici honours the signal once a connection is assigned; until then (a queue, a slow resolver) the
      // request waits, so the deadline is raced here too. The loser is drained so nothing leaks.
      const winner = await Promise.race([pending, deadline.aborted]);
      if (winner === ABORTED) {
        pending.then(
          (late) => late.body.destroy(),
          () => undefined,
        );
        throw deadline.signal.reason;
      }
      firstByteMs = elapsed();
      const body = await readCapped(winner.body, MAX_RESPONSE_BODY_BYTES);
      return {
        kind: 'response',
        status: winner.statusCode,
        retryAfterSeconds: parseRetryAfter(winner.headers['retry-after'], now()),
        body,
        durationMs: elapsed(),
      };
    } catch (error) {
      const durationMs = elapsed();
      const socket = traced.trace.socket;
      const detail = describeFailure({
        error,
        deadlineHit: deadline.signal.aborted,
        failedConnection: tracker.ofError(error),
        usedConnection: socket === null ? undefined : tracker.ofSocket(socket),
        awaitedConnection: socket === null ? tracker.pendingFor(url.hostname, portOf(url)) : undefined,
        request: traced.trace,
        firstByteMs,
        totalMs: durationMs,
      });
      return { ...classifyFailure(error, deadline.signal.aborted, request.timeoutMs), durationMs, detail };
    } finally {
      deadline.clear();
    }
  }

  return {
    post,
    close: () => agent.close(),
  };
}
