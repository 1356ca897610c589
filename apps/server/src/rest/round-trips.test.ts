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

  it('an admitted message costs at most 9 round trips whatever its fan-out', async () => {
    await h.services.teams.setPaymentCard(h.team.teamId, true);
    const tenant = await h.request('POST', '/tenants', {
      idempotencyKey: uniqueKey(),
      body: { external_id: 'rt-fanout', name: 'RT' },
    });
    await h.request('POST', '/event_types', { idempotencyKey: uniqueKey(), body: { name: 'rt.event' } });
    for (let i = 0; i < 5; i += 1)
      await h.request('POST', '/endpoints', {
        idempotencyKey: uniqueKey(),
        body: { tenant_id: tenant.json.id, url: `https://example.com/${i}` },
      });
    const publish = () =>
      h.request('POST', '/messages', {
        idempotencyKey: uniqueKey(),
        body: { tenant_id: tenant.json.id, event_type: 'rt.event', payload: { a: 1 } },
      });
    await publish();
    const trips = await roundTrips(publish, 202);
    expect(trips).toBeLessThanOrEqual(9);
  });
});
