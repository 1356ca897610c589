// The undici connector for deliveries: every new connection resolves the host again, refuses it unless every
// address passes the policy, dials one checked IPv4 address (the host name stays the TLS server name, so SNI
// and certificate checks are against the name), and checks `socket.remoteAddress` once connected.
// Keep-alive connections are reused per origin; the check happens whenever a connection is made.
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { buildConnector } from 'undici';
import type { ConnectionTrace, ConnectionTracker } from './connection-trace.js';
import type { UrlPolicy } from './host-policy.js';
import { checkConnectedAddress, resolveDestination, type DestinationBlock, type LookupFn } from './resolve.js';

/** A refusal by the connector. Its `code` keeps undici from treating it as a retryable socket error. */
export class UnsafeDestinationError extends Error {
  readonly code = 'SVC_UNSAFE_DESTINATION';
  constructor(
    readonly reason: string,
    readonly blocked: DestinationBlock,
  ) {
    super(`unsafe destination: ${reason}`);
    this.name = 'UnsafeDestinationError';
  }
}

/** Name resolution failed (no answer, timeout, server failure): a network failure, retried by the engine. */
export class DnsLookupError extends Error {
  constructor(readonly code: string) {
    super(`DNS lookup failed (${code})`);
    this.name = 'DnsLookupError';
  }
}

/** Resolving and connecting took longer than the connect timeout (undici's code, so it reads the same). */
export class ConnectDeadlineError extends Error {
  readonly code = 'UND_ERR_CONNECT_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`connect timed out after ${timeoutMs} ms`);
    this.name = 'ConnectDeadlineError';
  }
}

export interface PinnedConnectorOptions {
  readonly policy: UrlPolicy;
  readonly lookup: LookupFn;
  /** Name resolution, TCP connect and TLS handshake together, per connection. */
  readonly connectTimeoutMs: number;
  /** Extra trusted certificate authorities (tests, private CAs). The system store is used otherwise. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** Records each connection's steps and timings (egress-client's failure detail). */
  readonly tracker?: ConnectionTracker;
}

type Callback = buildConnector.Callback;

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : 'EUNKNOWN';
}

function pickAddress(addresses: readonly string[]): string {
  // Spread connections over every checked address; all of them passed the same check.
  return addresses[Math.floor(Math.random() * addresses.length)] ?? '';
}

export function createPinnedConnector(options: PinnedConnectorOptions): buildConnector.connector {
  const { policy, lookup } = options;
  const dial = buildConnector({
    timeout: options.connectTimeoutMs,
    rejectUnauthorized: true,
    ...(options.ca === undefined ? {} : { ca: options.ca as string | Buffer | Array<string | Buffer> }),
  });

  return (connectOptions, callback) => {
    let settled = false;
    const port = Number(connectOptions.port) || (connectOptions.protocol === 'https:' ? 443 : 80);
    const trace: ConnectionTrace | undefined = options.tracker?.start(connectOptions.hostname, port);
    const since = (start: number) => Math.round(performance.now() - start);
    let dialledAt = 0;
    /** The time spent in the connection's current step, when it ends (done or failed). */
    const endStep = (t: ConnectionTrace) => {
      if (t.step === 'dns' && t.dnsMs === null) t.dnsMs = since(t.startedAt);
      if (t.step === 'connect' && t.connectMs === null && dialledAt > 0) t.connectMs = since(dialledAt);
      if (t.step === 'tls' && t.tlsMs === null) t.tlsMs = since(dialledAt) - (t.connectMs ?? 0);
    };
    const finish: Callback = (...args) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (trace !== undefined) {
        const [error, socket] = args;
        endStep(trace);
        if (error) options.tracker!.failed(trace, error);
        else options.tracker!.opened(trace, socket as Socket);
      }
      callback(...args);
    };
    // undici starts a request's own abort only once it has a connection, so a connector that never settled
    // would hold its requests forever: name resolution and dialling share one connect deadline.
    const timer = setTimeout(
      () => finish(new ConnectDeadlineError(options.connectTimeoutMs), null),
      options.connectTimeoutMs,
    );

    resolveDestination(connectOptions.hostname, policy, lookup).then(
      (destination) => {
        // An IP address in the URL is not looked up: no DNS time.
        if (trace !== undefined) trace.dnsMs = destination.ok && destination.hostIsIp ? null : since(trace.startedAt);
        if (!destination.ok) {
          if (trace !== undefined) trace.address = destination.address ?? null;
          finish(new UnsafeDestinationError(destination.reason, destination.blocked), null);
          return;
        }
        const address = pickAddress(destination.addresses);
        const servername = destination.hostIsIp ? undefined : connectOptions.hostname.replace(/\.$/, '');
        try {
          if (settled) return;
          dialledAt = performance.now();
          if (trace !== undefined) Object.assign(trace, { step: 'connect', address, port });
          // undici's connector returns the socket it made (its type says void): TCP and TLS steps are timed on it.
          const dialled = dial({ ...connectOptions, hostname: address, servername }, (error, socket) => {
            if (settled) {
              socket?.destroy();
              return;
            }
            if (error) {
              finish(error, null);
              return;
            }
            const connected = checkConnectedAddress((socket as Socket).remoteAddress, policy);
            if (!connected.ok) {
              (socket as Socket).destroy();
              if (trace !== undefined) {
                endStep(trace);
                trace.step = 'connect';
              }
              finish(new UnsafeDestinationError(connected.reason, 'address'), null);
              return;
            }
            finish(null, socket as Socket);
          });
          // TCP is up: over https the TLS handshake follows (a TLS socket emits 'connect' for its TCP connection).
          // Over http undici's own listener (added first) has already finished the connection by then.
          (dialled as unknown as Socket | undefined)?.once('connect', () => {
            if (trace === undefined || settled) return;
            trace.connectMs = since(dialledAt);
            trace.step = 'tls';
          });
        } catch (error) {
          finish(error as Error, null);
        }
      },
      (error: unknown) => {
        if (trace !== undefined) trace.dnsMs = since(trace.startedAt);
        finish(new DnsLookupError(errorCode(error)), null);
      },
    );
  };
}
