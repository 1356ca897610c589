import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRoundTrips } from '@svc/db';
import { startHarness, uniqueKey, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** Postgres round trips of one request, measured in this process (the server runs in it). */
async function roundTrips(send: () => Promise<{ status: number }>, status: number): Promise<number> {
  const counter = countRoundTrips();
  const response = await send();
  expect(response.status).toBe(status);
  return counter.count;
}

describe('round trips per request on the hot configuration paths', () => {
  it('GET costs 2, PATCH 5 and a create 10 (were 3, 7 and 11)', async () => {
    const created = await h.request('POST', '/tenants', {
      idempotencyKey: uniqueKey(),
      body: { external_id: 'rt-0', name: 'RT' },
    });
    const id = created.json.id as string;
    const get = await roundTrips(() => h.request('GET', `/tenants/${id}`), 200);
    const etag = (await h.request('GET', `/tenants/${id}`)).headers.get('etag')!;
    const patch = await roundTrips(
      () => h.request('PATCH', `/tenants/${id}`, { ifMatch: etag, body: { name: 'Renamed' } }),
      200,
    );
    const create = await roundTrips(
      () => h.request('POST', '/tenants', { idempotencyKey: uniqueKey(), body: { external_id: 'rt-1', name: 'RT' } }),
      201,
    );
    expect(get).toBeLessThanOrEqual(2);
    expect(patch).toBeLessThanOrEqual(5);
    expect(create).toBeLessThanOrEqual(10);
  });
});
