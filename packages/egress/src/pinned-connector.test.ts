import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { UrlPolicy } from './host-policy.js';
import { createPinnedConnector, UnsafeDestinationError } from './pinned-connector.js';
import type { LookupFn } from './resolve.js';
import { httpReceiver, type Receiver } from './testing/receivers.js';

const STRICT: UrlPolicy = { allowLoopback: false, serviceHosts: [] };

function lookupTo(addresses: string[]): LookupFn & { asked: string[] } {
  const asked: string[] = [];
  return Object.assign(
    async (host: string) => {
      asked.push(host);
      return addresses;
    },
    { asked },
  );
}

function connect(connector: ReturnType<typeof createPinnedConnector>, hostname: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    connector({ hostname, host: `${hostname}:${port}`, protocol: 'http:', port: String(port) }, (error, socket) => {
      if (error) reject(error);
      else resolve(socket as Socket);
    });
  });
}

let target: Receiver | undefined;
afterEach(async () => {
  await target?.close();
  target = undefined;
});

describe('createPinnedConnector', () => {
  it('dials the checked address of a name and hands over the socket', async () => {
    target = await httpReceiver((_req, res) => res.end());
    const lookup = lookupTo(['127.0.0.1']);
    const connector = createPinnedConnector({
      policy: { allowLoopback: true, serviceHosts: [] },
      lookup,
      connectTimeoutMs: 1_000,
    });
    const socket = await connect(connector, 'hooks.test.example', target.port);
    expect(socket.remoteAddress).toBe('127.0.0.1');
    expect(lookup.asked).toEqual(['hooks.test.example.']);
    socket.destroy();
  });

  it('with the strict policy, refuses a name resolving to loopback before any connection', async () => {
    target = await httpReceiver((_req, res) => res.end());
    const connector = createPinnedConnector({
      policy: STRICT,
      lookup: lookupTo(['127.0.0.1']),
      connectTimeoutMs: 1_000,
    });
    const refusal = connect(connector, 'hooks.test.example', target.port);
    await expect(refusal).rejects.toBeInstanceOf(UnsafeDestinationError);
    await expect(refusal).rejects.toMatchObject({ reason: 'host resolves to a loopback address', blocked: 'address' });
    expect(target.connections).toBe(0);
  });

  it('with the strict policy, refuses IP literals without asking DNS', async () => {
    target = await httpReceiver((_req, res) => res.end());
    const lookup = lookupTo(['93.184.216.34']);
    const connector = createPinnedConnector({ policy: STRICT, lookup, connectTimeoutMs: 1_000 });
    await expect(connect(connector, '127.0.0.1', target.port)).rejects.toMatchObject({ blocked: 'address' });
    await expect(connect(connector, '::1', target.port)).rejects.toMatchObject({ blocked: 'address' });
    expect(lookup.asked).toEqual([]);
    expect(target.connections).toBe(0);
  });

  it('checks the connected socket again and drops it when its address is refused', async () => {
    target = await httpReceiver((_req, res) => res.end());
    // The first check (the DNS answer) sees loopback allowed, the second (the connected socket) does not: this
    // stands for anything that changes between the two, and shows that the second check is made and enforced.
    let reads = 0;
    const flipping: UrlPolicy = {
      serviceHosts: [],
      get allowLoopback() {
        reads += 1;
        return reads === 1;
      },
    };
    const connector = createPinnedConnector({
      policy: flipping,
      lookup: lookupTo(['127.0.0.1']),
      connectTimeoutMs: 1_000,
    });
    await expect(connect(connector, 'hooks.test.example', target.port)).rejects.toMatchObject({
      reason: 'connected to a loopback address',
      blocked: 'address',
    });
    expect(target.connections).toBe(1);
    expect(target.requests).toHaveLength(0);
  });
});
