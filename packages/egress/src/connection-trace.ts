// Where each delivery connection got to and how long each step took, so that a failed attempt can say where it
// failed. The connector fills a ConnectionTrace per connection it makes; a request finds the trace of the socket
// it was written to through undici's `undici:client:sendHeaders` diagnostics message, matched by the identity of
// the request's body Buffer (undici keeps a Buffer body as given). A connection that failed hands its trace on
// through its error.
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** How far a connection got: resolving its name, dialling, the TLS handshake, or open. */
export type ConnectionStep = 'dns' | 'connect' | 'tls' | 'open';

export interface ConnectionTrace {
  /** `hostname:port` as the connector was asked for it: what a request waiting for a connection matches. */
  readonly target: string;
  readonly startedAt: number;
  step: ConnectionStep;
  /** Name resolution (and the safety check of its answers), ms. */
  dnsMs: number | null;
  /** The address dialled, or the one the safety rules refused. */
  address: string | null;
  port: number | null;
  /** TCP connect, ms. */
  connectMs: number | null;
  /** TLS handshake, ms; null over http. */
  tlsMs: number | null;
  /** Requests written to this connection so far. */
  uses: number;
}

/** The traces of one egress client's connections. */
export class ConnectionTracker {
  private readonly bySocket = new WeakMap<Socket, ConnectionTrace>();
  private readonly byError = new WeakMap<object, ConnectionTrace>();
  /** Connections still being made, per target, oldest first. */
  private readonly pending = new Map<string, Set<ConnectionTrace>>();

  start(hostname: string, port: number): ConnectionTrace {
    const trace: ConnectionTrace = {
      target: targetOf(hostname, port),
      startedAt: performance.now(),
      step: 'dns',
      dnsMs: null,
      address: null,
      port: null,
      connectMs: null,
      tlsMs: null,
      uses: 0,
    };
    const set = this.pending.get(trace.target) ?? new Set();
    set.add(trace);
    this.pending.set(trace.target, set);
    return trace;
  }

  opened(trace: ConnectionTrace, socket: Socket): void {
    trace.step = 'open';
    this.bySocket.set(socket, trace);
    this.settle(trace);
  }

  failed(trace: ConnectionTrace, error: unknown): void {
    if (typeof error === 'object' && error !== null) this.byError.set(error, trace);
    this.settle(trace);
  }

  ofSocket(socket: Socket): ConnectionTrace | undefined {
    return this.bySocket.get(socket);
  }

  ofError(error: unknown): ConnectionTrace | undefined {
    return typeof error === 'object' && error !== null ? this.byError.get(error) : undefined;
  }

  /** The newest connection still being made to a target: what a request that timed out while waiting waited on. */
  pendingFor(hostname: string, port: number): ConnectionTrace | undefined {
    const set = this.pending.get(targetOf(hostname, port));
    return set === undefined ? undefined : [...set].pop();
  }

  private settle(trace: ConnectionTrace): void {
    const set = this.pending.get(trace.target);
    set?.delete(trace);
    if (set?.size === 0) this.pending.delete(trace.target);
  }
}

function targetOf(hostname: string, port: number): string {
  return `${hostname.toLowerCase()}:${port}`;
}

/** What one request learned: the connection it was written to, and when its response headers came. */
export interface RequestTrace {
  socket: Socket | null;
  reusedConnection: boolean;
}

const requests = new WeakMap<Buffer, { trace: RequestTrace; tracker: ConnectionTracker }>();
let subscribed = false;

function onSendHeaders(message: unknown): void {
  const { request, socket } = message as { request?: { body?: unknown }; socket?: Socket };
  const body = request?.body;
  if (!Buffer.isBuffer(body) || socket === undefined) return;
  const found = requests.get(body);
  if (found === undefined) return;
  found.trace.socket = socket;
  const connection = found.tracker.ofSocket(socket);
  if (connection !== undefined) {
    connection.uses += 1;
    found.trace.reusedConnection = connection.uses > 1;
  }
}

/**
 * Starts tracing one request. Returns the body to send (the same bytes under a Buffer object of its own, no copy:
 * its identity is what the diagnostics message is matched by) and the trace it fills. An empty body cannot be
 * matched (undici sends it as null): its trace stays empty.
 */
export function traceRequest(tracker: ConnectionTracker, body: Buffer): { body: Buffer; trace: RequestTrace } {
  if (!subscribed) {
    subscribe('undici:client:sendHeaders', onSendHeaders);
    subscribed = true;
  }
  const own = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const trace: RequestTrace = { socket: null, reusedConnection: false };
  requests.set(own, { trace, tracker });
  return { body: own, trace };
}
