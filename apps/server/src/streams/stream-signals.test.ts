import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notifyStreamsEnded, parseStreamEndSignal, STREAM_END_CHANNEL } from '@svc/core';
import { startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('the signal that ends streams', () => {
  it('splits many IDs over notifications that fit a NOTIFY payload (a tenant with hundreds of stream endpoints)', async () => {
    const listener = new pg.Client({ connectionString: h.databaseUrl });
    await listener.connect();
    const payloads: string[] = [];
    listener.on('notification', (message) => payloads.push(message.payload ?? ''));
    await listener.query(`LISTEN ${STREAM_END_CHANNEL}`);
    try {
      // 450 IDs of 30 characters: about 14,000 bytes in one payload, over Postgres' 8,000.
      const endpointIds = Array.from({ length: 450 }, (_, i) => `wde_${String(i).padStart(26, '0')}`);
      const tokenIds = ['wst_revoked'];
      await h.services.db.transaction((tx) => notifyStreamsEnded(tx, { endpointIds, tokenIds }));
      const deadline = Date.now() + 5000;
      while (payloads.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(payloads).toHaveLength(4);
      const signals = payloads.map((payload) => parseStreamEndSignal(payload)!);
      expect(signals.flatMap((s) => s.endpointIds ?? [])).toEqual(endpointIds);
      expect(signals.flatMap((s) => s.tokenIds ?? [])).toEqual(tokenIds);
      for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    } finally {
      await listener.end();
    }
  });
});
