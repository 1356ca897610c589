// createDnsLookup against a real DNS server on loopback (UDP), so the c-ares path and its timeout are real.
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { createDnsLookup } from './dns-lookup.js';

type Answer = { addresses: string[] } | { rcode: number } | 'silent';

/** Answers A queries from a table; unknown names get NXDOMAIN. */
async function dnsServer(table: Record<string, Answer>): Promise<{ server: string; close(): Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, peer) => {
    const labels: string[] = [];
    let offset = 12;
    while (offset < query.length && query[offset] !== 0) {
      const length = query[offset] ?? 0;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5; // zero label, QTYPE, QCLASS
    const answer = table[labels.join('.').toLowerCase()] ?? { rcode: 3 };
    if (answer === 'silent') return;
    const addresses = 'addresses' in answer ? answer.addresses : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | ('rcode' in answer ? answer.rcode : 0), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const records = addresses.map((address) => {
      const record = Buffer.alloc(16);
      record.writeUInt16BE(0xc00c, 0); // name: pointer to the question
      record.writeUInt16BE(1, 2); // A
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(4, 10);
      address.split('.').forEach((octet, index) => record.writeUInt8(Number(octet), 12 + index));
      return record;
    });
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...records]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('createDnsLookup (c-ares)', () => {
  it('returns every A record of an absolute name', async () => {
    const dns = await dnsServer({ 'hooks.test.example': { addresses: ['93.184.216.34', '8.8.8.8'] } });
    close = dns.close;
    const lookup = createDnsLookup({ servers: [dns.server], timeoutMs: 2_000 });
    await expect(lookup('hooks.test.example.')).resolves.toEqual(['93.184.216.34', '8.8.8.8']);
  });

  it('rejects with ENOTFOUND for a name that does not exist', async () => {
    const dns = await dnsServer({});
    close = dns.close;
    const lookup = createDnsLookup({ servers: [dns.server], timeoutMs: 2_000 });
    await expect(lookup('missing.test.example.')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('gives up on a silent server within its timeout', async () => {
    const dns = await dnsServer({ 'slow.test.example': 'silent' });
    close = dns.close;
    const lookup = createDnsLookup({ servers: [dns.server], timeoutMs: 400 });
    const started = Date.now();
    await expect(lookup('slow.test.example.')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
