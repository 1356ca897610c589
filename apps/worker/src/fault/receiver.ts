import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** One request the receiver read completely. */
export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/**
 * What the receiver does with a request on a path, once it has read the body: answer (status, headers, body),
 * or hold the response open until the connection closes (a receiver that is slow to answer).
 */
export type Behaviour =
  { kind: 'answer'; status?: number; headers?: Record<string, string>; delayMs?: number } | { kind: 'hold' };

export interface Receiver {
  readonly baseUrl: string;
  readonly requests: ReceivedRequest[];
  /** Requests on a path whose webhook-id is the given message ID. */
  received(path: string, messageId?: string): ReceivedRequest[];
  set(path: string, behaviour: Behaviour): void;
  /** The next `count` connections are accepted and never read (the sender's bytes stay in the kernel). */
  holdUnreadConnections(count: number): void;
  /** Connections accepted and left unread so far. */
  readonly unreadConnections: number;
  /** Responses held open right now (behaviour hold). */
  readonly heldResponses: number;
  /** The most requests on the path that were open at the same time (from headers in until the response ends). */
  maxConcurrent(path: string): number;
  /** The most requests open at the same time on all paths together (since the last resetPeakTotal). */
  readonly peakTotal: number;
  resetPeakTotal(): void;
  /** Requests open right now on all paths together. */
  heldOpen(): number;
  /** The most requests open at the same time on the paths that match (since the receiver started). */
  peakOf(match: (path: string) => boolean): number;
  close(): Promise<void>;
}

/**
 * A loopback receiver that counts what it got. It listens with a plain TCP server and hands connections to an
 * HTTP server, so that it can also accept a connection without reading a byte of it.
 */
export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const behaviours = new Map<string, Behaviour>();
  const open = new Map<string, number>();
  const peak = new Map<string, number>();
  const sockets = new Set<net.Socket>();
  let unreadToAccept = 0;
  let unreadConnections = 0;
  let heldResponses = 0;
  let openTotal = 0;
  let peakTotal = 0;
  /** Each request's opening (+1) and end (-1) in order, for the peak of any set of paths. */
  const changes: { path: string; delta: 1 | -1 }[] = [];

  const httpServer = http.createServer((request, response) => {
    const path = request.url ?? '';
    open.set(path, (open.get(path) ?? 0) + 1);
    peak.set(path, Math.max(peak.get(path) ?? 0, open.get(path)!));
    openTotal += 1;
    peakTotal = Math.max(peakTotal, openTotal);
    changes.push({ path, delta: 1 });
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      open.set(path, open.get(path)! - 1);
      openTotal -= 1;
      changes.push({ path, delta: -1 });
    };
    response.once('close', finish);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ path, headers: request.headers, body: Buffer.concat(chunks), at: Date.now() });
      const behaviour = behaviours.get(path) ?? { kind: 'answer' };
      if (behaviour.kind === 'hold') {
        heldResponses += 1;
        response.once('close', () => (heldResponses -= 1));
        return;
      }
      const reply = () => {
        if (!response.destroyed) response.writeHead(behaviour.status ?? 200, behaviour.headers ?? {}).end('ok');
      };
      if (behaviour.delayMs) setTimeout(reply, behaviour.delayMs);
      else reply();
    });
  });
  httpServer.keepAliveTimeout = 2000;

  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (unreadToAccept > 0) {
      unreadToAccept -= 1;
      unreadConnections += 1;
      // Never read: the request stays in the socket buffers; the connection ends when the sender goes away.
      socket.pause();
      return;
    }
    httpServer.emit('connection', socket);
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(tcp.address() as AddressInfo).port}`;

  return {
    baseUrl,
    requests,
    received: (path, messageId) =>
      requests.filter((r) => r.path === path && (messageId === undefined || r.headers['webhook-id'] === messageId)),
    set: (path, behaviour) => void behaviours.set(path, behaviour),
    holdUnreadConnections(count) {
      unreadToAccept = count;
    },
    get unreadConnections() {
      return unreadConnections;
    },
    get heldResponses() {
      return heldResponses;
    },
    maxConcurrent: (path) => peak.get(path) ?? 0,
    get peakTotal() {
      return peakTotal;
    },
    resetPeakTotal() {
      peakTotal = openTotal;
    },
    heldOpen: () => openTotal,
    peakOf(match) {
      let open = 0;
      let peak = 0;
      for (const change of changes) {
        if (!match(change.path)) continue;
        open += change.delta;
        peak = Math.max(peak, open);
      }
      return peak;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      httpServer.close();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
