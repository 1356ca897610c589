// Name resolution for deliveries. node:dns `lookup` (getaddrinfo) runs on the libuv threadpool, four threads
// shared with fs and crypto: a few slow resolvers would stall everything else in the process. The c-ares
// Resolver talks DNS itself on the event loop, and its queries time out.
import { Resolver } from 'node:dns/promises';
import type { LookupFn } from './resolve.js';

export interface DnsLookupOptions {
  /** Total time for one name, all tries included. Default 5,000 ms. */
  readonly timeoutMs?: number;
  /** Name servers to ask (`1.1.1.1`, `[::1]:5353`); the system's by default. */
  readonly servers?: readonly string[];
}

const DEFAULT_TIMEOUT_MS = 5_000;
const TRIES = 2;

/** A LookupFn on c-ares (`resolve4`). It does not read /etc/hosts: receivers are public names. */
export function createDnsLookup(options: DnsLookupOptions = {}): LookupFn {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const resolver = new Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / TRIES)), tries: TRIES });
  if (options.servers) resolver.setServers([...options.servers]);

  return async (host) => {
    let timer: NodeJS.Timeout | undefined;
    // c-ares backs off between tries, so its own timeout is a floor; this one is the ceiling.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error(`DNS lookup timed out after ${timeoutMs} ms`), { code: 'ETIMEOUT' })),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([resolver.resolve4(host), deadline]);
    } finally {
      clearTimeout(timer);
    }
  };
}
