import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRoundTrips } from '@svc/db';
import { DAY, newId, SECOND, type NewOperationalEvent } from '@svc/core';
import { post, startHarness, type ApiResponse, type Harness, type TestTeam } from '../testing/harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

interface Scene {
  team: TestTeam;
  tenantId: string;
}

/** A team of its own with one tenant, so each test reads only its own events. */
async function scene(name: string): Promise<Scene> {
  const team = await h.newTeam(name);
  const tenant = await post(h, '/tenants', { external_id: name, name }, { key: team.key });
  expect(tenant.status, tenant.text).toBe(201);
  return { team, tenantId: tenant.json.id };
}

function deliveryFailed(
  s: Scene,
  endpointId: string,
  overrides: Record<string, string | number | null> = {},
): NewOperationalEvent {
  const deliveryId = newId('delivery', h.clock);
  return {
    type: 'webhooks.delivery.failed',
    teamId: s.team.teamId,
    tenantId: s.tenantId,
    resourceId: deliveryId,
    data: {
      delivery_id: deliveryId,
      message_id: newId('message', h.clock),
      endpoint_id: endpointId,
      attempts: 9,
      last_status_code: 503,
      reason: 'http_503_attempts_exhausted',
      ...overrides,
    },
  };
}

function endpointDisabled(s: Scene, endpointId: string, version = '4'): NewOperationalEvent {
  return {
    type: 'webhooks.endpoint.disabled',
    teamId: s.team.teamId,
    tenantId: s.tenantId,
    resourceId: endpointId,
    resourceVersion: version,
    data: { endpoint_id: endpointId, reason: 'endpoint_gone' },
  };
}

async function emit(...events: NewOperationalEvent[]): Promise<void> {
  await h.services.db.transaction((tx) => h.services.events.emit(tx, events));
}

/**
 * The feed lists what committed below the oldest running transaction of the whole cluster (other test files run
 * transactions too): wait until everything written so far is listable.
 */
async function feedSettled(): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const [row] = await h.services.db.query(
      `SELECT coalesce(max(txid) < pg_snapshot_xmin(pg_current_snapshot()), true) AS settled FROM operational_events`,
    );
    if (row.settled) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the event feed did not settle');
}

async function list(s: Scene, query = ''): Promise<ApiResponse> {
  await feedSettled();
  return h.request('GET', `/events${query}`, { key: s.team.key });
}

function eventIds(page: ApiResponse): string[] {
  return page.json.data.map((e: { id: string }) => e.id);
}

describe('GET /events and GET /events/{id}', () => {
  it('shows a failed delivery with its IDs, reason and counts, and the same event by ID', async () => {
    const s = await scene('shape');
    const endpointId = newId('endpoint', h.clock);
    const failed = deliveryFailed(s, endpointId);
    await emit(failed);
    const page = await list(s);
    expect(page.status).toBe(200);
    expect(page.json.data).toHaveLength(1);
    const event = page.json.data[0];
    expect(event).toEqual({
      id: expect.stringMatching(/^wdv_[0-9a-z]{26}$/),
      type: 'webhooks.delivery.failed',
      created_at: h.clock.now().toISOString(),
      mode: 'live',
      resource_id: failed.resourceId,
      tenant_id: s.tenantId,
      resource_version: '0',
      data: failed.data,
      coalesced: false,
      count: 1,
      first_id: failed.resourceId,
      last_id: failed.resourceId,
    });
    const one = await h.request('GET', `/events/${event.id}`, { key: s.team.key });
    expect(one.status).toBe(200);
    expect(one.json).toEqual(event);
  });

  it('states the disabled event data exactly as the spec does: {endpoint_id, reason}', async () => {
    const s = await scene('disabled');
    const endpointId = newId('endpoint', h.clock);
    await emit(endpointDisabled(s, endpointId, '7'));
    const page = await list(s);
    expect(page.json.data[0]).toMatchObject({
      type: 'webhooks.endpoint.disabled',
      resource_id: endpointId,
      resource_version: '7',
      data: { endpoint_id: endpointId, reason: 'endpoint_gone' },
    });
    expect(Object.keys(page.json.data[0].data).sort()).toEqual(['endpoint_id', 'reason']);
  });

  it('answers 404 for a missing, malformed or other team’s event, and lists only the team’s own', async () => {
    const mine = await scene('tenancy-mine');
    const theirs = await scene('tenancy-theirs');
    await emit(deliveryFailed(mine, newId('endpoint', h.clock)));
    const [event] = (await list(mine)).json.data;
    const other = await h.request('GET', `/events/${event.id}`, { key: theirs.team.key });
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('not_found');
    expect((await list(theirs)).json.data).toEqual([]);
    for (const id of [newId('operationalEvent', h.clock), 'wdv_nope', 'wdd_0000000000000000000000000']) {
      const missing = await h.request('GET', `/events/${id}`, { key: mine.team.key });
      expect(missing.status, id).toBe(404);
      expect(missing.json.error.code).toBe('not_found');
    }
  });
});

describe('filters', () => {
  it('filters by type, tenant and resource; a coalesced event is found by its first or last resource', async () => {
    const s = await scene('filters');
    const otherTenant = await post(h, '/tenants', { external_id: 'filters-2', name: 'Two' }, { key: s.team.key });
    const s2: Scene = { team: s.team, tenantId: otherTenant.json.id };
    const endpointA = newId('endpoint', h.clock);
    const first = deliveryFailed(s, endpointA);
    const middle = deliveryFailed(s, endpointA);
    const last = deliveryFailed(s, endpointA);
    await emit(first);
    h.clock.advance(5 * SECOND);
    await emit(middle, last);
    const endpointB = newId('endpoint', h.clock);
    await emit(endpointDisabled(s2, endpointB));

    const all = await list(s);
    expect(all.json.data.map((e: { type: string }) => e.type)).toEqual([
      'webhooks.delivery.failed',
      'webhooks.endpoint.disabled',
    ]);
    const byType = await list(s, '?type=webhooks.endpoint.disabled');
    expect(byType.json.data.map((e: { resource_id: string }) => e.resource_id)).toEqual([endpointB]);
    const byTenant = await list(s, `?tenant_id=${s2.tenantId}`);
    expect(byTenant.json.data.map((e: { resource_id: string }) => e.resource_id)).toEqual([endpointB]);

    const [coalesced] = all.json.data;
    for (const resource of [first.resourceId, last.resourceId]) {
      const found = await list(s, `?resource_id=${resource}`);
      expect(eventIds(found), resource).toEqual([coalesced.id]);
    }
    // Only the first and last occurrences of a burst are named; a middle one is not findable.
    expect((await list(s, `?resource_id=${middle.resourceId}`)).json.data).toEqual([]);
    expect((await list(s, `?type=webhooks.replay.failed&tenant_id=${s.tenantId}`)).json.data).toEqual([]);
  });

  it('refuses a type outside the spec’s list, unknown parameters and bad limits with 422 invalid_field', async () => {
    const s = await scene('bad-filters');
    for (const [query, field] of [
      ['?type=webhooks.delivery.succeeded', 'type'],
      ['?type=', 'type'],
      ['?resource=wdd_x', 'resource'],
      ['?tenant_id=not an id', 'tenant_id'],
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
    ] as const) {
      const r = await h.request('GET', `/events${query}`, { key: s.team.key });
      expect(r.status, query).toBe(422);
      expect(r.json.error, query).toMatchObject({ code: 'invalid_field', field });
    }
  });
});

describe('coalescing', () => {
  it('folds failures of one endpoint within 60 seconds of the first into one event; later ones open a new event', async () => {
    const s = await scene('burst');
    const endpointId = newId('endpoint', h.clock);
    const start = h.clock.now().toISOString();
    const burst = [deliveryFailed(s, endpointId, { reason: 'http_500_attempts_exhausted', last_status_code: 500 })];
    await emit(burst[0]!);
    for (let i = 0; i < 3; i += 1) {
      h.clock.advance(19 * SECOND);
      const next = deliveryFailed(s, endpointId);
      burst.push(next);
      await emit(next);
    }
    // 57 seconds after the first: still the same event. Another endpoint's failure is its own event.
    const elsewhere = deliveryFailed(s, newId('endpoint', h.clock));
    await emit(elsewhere);
    h.clock.advance(3 * SECOND); // exactly 60 seconds after the first: a new window
    const late = deliveryFailed(s, endpointId);
    await emit(late);

    const page = await list(s);
    expect(page.json.data).toHaveLength(3);
    const folded = page.json.data.find((e: { resource_id: string }) => e.resource_id === burst[0]!.resourceId);
    expect(folded).toMatchObject({
      created_at: start,
      coalesced: true,
      count: 4,
      first_id: burst[0]!.resourceId,
      last_id: burst[3]!.resourceId,
      // The first occurrence's data.
      data: { delivery_id: burst[0]!.resourceId, last_status_code: 500, reason: 'http_500_attempts_exhausted' },
    });
    expect(page.json.data.find((e: { resource_id: string }) => e.resource_id === elsewhere.resourceId)).toMatchObject({
      coalesced: false,
      count: 1,
    });
    expect(page.json.data.find((e: { resource_id: string }) => e.resource_id === late.resourceId)).toMatchObject({
      coalesced: false,
      count: 1,
      first_id: late.resourceId,
      last_id: late.resourceId,
    });
  });

  it('folds a batch in one round trip, and concurrent emitters of one burst fold into one event', async () => {
    const s = await scene('batch');
    const endpointId = newId('endpoint', h.clock);
    const batch = Array.from({ length: 10 }, () => deliveryFailed(s, endpointId));
    await h.services.db.transaction(async (tx) => {
      const counter = countRoundTrips();
      await h.services.events.emit(tx, [...batch, endpointDisabled(s, endpointId)]);
      expect(counter.count).toBe(1);
    });

    // Two transactions fail deliveries of another endpoint at once: the second waits for the first's window.
    const other = newId('endpoint', h.clock);
    const held = h.services.db.createQueryRunner();
    await held.connect();
    await held.startTransaction();
    await h.services.events.emit(held.manager, [deliveryFailed(s, other)]);
    const second = emit(deliveryFailed(s, other));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await held.commitTransaction();
    await held.release();
    await second;

    const page = await list(s);
    expect(page.json.data.map((e: { type: string; count: number }) => [e.type, e.count])).toEqual([
      ['webhooks.delivery.failed', 10],
      ['webhooks.endpoint.disabled', 1],
      ['webhooks.delivery.failed', 2],
    ]);
    expect(page.json.data[0]).toMatchObject({ first_id: batch[0]!.resourceId, last_id: batch[9]!.resourceId });
  });

  it('moves a grown event to the end of the feed, so a poller sees the new count', async () => {
    const s = await scene('grown');
    const endpointId = newId('endpoint', h.clock);
    await emit(deliveryFailed(s, endpointId));
    const first = await list(s);
    expect(first.json.data.map((e: { count: number }) => e.count)).toEqual([1]);
    h.clock.advance(10 * SECOND);
    await emit(deliveryFailed(s, endpointId));
    const next = await list(s, `?cursor=${first.json.next_cursor}`);
    expect(eventIds(next)).toEqual(eventIds(first));
    expect(next.json.data[0]).toMatchObject({ coalesced: true, count: 2 });
  });

  it('refuses events that would carry payloads, URLs or unknown fields (the emitter’s transaction fails)', async () => {
    const s = await scene('refused');
    const endpointId = newId('endpoint', h.clock);
    const bad: NewOperationalEvent[] = [
      { ...endpointDisabled(s, endpointId), data: { endpoint_id: endpointId, reason: 'https://example.com/hook' } },
      { ...endpointDisabled(s, endpointId), data: { endpoint_id: endpointId, reason: 'x', payload: '{"a":1}' } },
      { ...endpointDisabled(s, endpointId), data: { endpoint_id: endpointId } },
      { ...deliveryFailed(s, endpointId), data: { ...deliveryFailed(s, endpointId).data, attempts: 1.5 } },
      { ...deliveryFailed(s, endpointId), resourceId: newId('delivery', h.clock) },
      { ...endpointDisabled(s, endpointId), data: { endpoint_id: endpointId, reason: 'a'.repeat(201) } },
      { ...endpointDisabled(s, endpointId), type: 'webhooks.delivery.succeeded' as never },
      // A console link never carries a query, credentials or another scheme; a time is an ISO instant.
      ...[
        'https://console.example.com/endpoints/x?token=secret',
        'https://user:pw@console.example.com/endpoints/x',
        'javascript:alert(1)',
      ].map((link) => failing(s, endpointId, { console_url: link })),
      failing(s, endpointId, { next_probe_at: 'tomorrow' }),
    ];
    for (const event of bad) await expect(emit(event), JSON.stringify(event)).rejects.toThrow(/refused/);
    expect((await list(s)).json.data).toEqual([]);
  });
});

/** A webhooks.endpoint.failing event with some of its data replaced. */
function failing(s: Scene, endpointId: string, data: Record<string, string>): NewOperationalEvent {
  return {
    ...endpointDisabled(s, endpointId),
    type: 'webhooks.endpoint.failing',
    data: {
      endpoint_id: endpointId,
      failures: 10,
      last_error: 'http_500',
      last_status_code: 500,
      next_probe_at: '2026-11-02T10:01:00.000Z',
      console_url: null,
      ...data,
    },
  };
}

describe('paging and the feed', () => {
  it('pages oldest first with cursors bound to the filters, and keeps a position to poll from', async () => {
    const s = await scene('paging');
    const endpoints = Array.from({ length: 5 }, () => newId('endpoint', h.clock));
    for (const endpointId of endpoints) await emit(endpointDisabled(s, endpointId));

    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    for (;;) {
      const page = await list(s, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      if (page.json.data.length === 0) {
        expect(page.json.next_cursor).toBeNull();
        break;
      }
      pages.push(page.json.data.length);
      seen.push(...page.json.data.map((e: { resource_id: string }) => e.resource_id));
      cursor = page.json.next_cursor;
      expect(cursor).toEqual(expect.any(String));
    }
    expect(pages).toEqual([2, 2, 1]);
    expect(seen).toEqual(endpoints);

    // A poller keeps its last cursor: a later event is the next thing it sees.
    const later = newId('endpoint', h.clock);
    await emit(endpointDisabled(s, later));
    const polled = await list(s, `?limit=2&cursor=${cursor}`);
    expect(polled.json.data.map((e: { resource_id: string }) => e.resource_id)).toEqual([later]);

    // A cursor continues only its own list and filters.
    for (const query of [
      `?limit=2&type=webhooks.endpoint.disabled&cursor=${cursor}`,
      `?cursor=${cursor}&tenant_id=${s.tenantId}`,
      `?cursor=garbage`,
    ]) {
      const r = await h.request('GET', `/events${query}`, { key: s.team.key });
      expect(r.status, query).toBe(422);
      expect(r.json.error.code).toBe('invalid_cursor');
    }
    const otherTeam = await scene('paging-other');
    const stolen = await h.request('GET', `/events?limit=2&cursor=${cursor}`, { key: otherTeam.team.key });
    expect(stolen.json.error.code).toBe('invalid_cursor');
  });

  it('never skips a late commit: a page stops before a running transaction’s event and continues with it', async () => {
    const s = await scene('late');
    await emit(endpointDisabled(s, newId('endpoint', h.clock)));
    const before = await list(s);
    expect(before.json.data).toHaveLength(1);

    // A long transaction emits first; a short one emits and commits after it.
    const held = h.services.db.createQueryRunner();
    await held.connect();
    await held.startTransaction();
    const lateEndpoint = newId('endpoint', h.clock);
    const quickEndpoint = newId('endpoint', h.clock);
    try {
      await h.services.events.emit(held.manager, [endpointDisabled(s, lateEndpoint)]);
      await emit(endpointDisabled(s, quickEndpoint));
      const meanwhile = await h.request('GET', `/events?cursor=${before.json.next_cursor}`, { key: s.team.key });
      expect(meanwhile.status).toBe(200);
      // The committed event waits behind the running one rather than being listed past it.
      expect(meanwhile.json.data).toEqual([]);
      await held.commitTransaction();
    } finally {
      if (held.isTransactionActive) await held.rollbackTransaction();
      await held.release();
    }
    const after = await list(s, `?cursor=${before.json.next_cursor}`);
    expect(after.json.data.map((e: { resource_id: string }) => e.resource_id)).toEqual([lateEndpoint, quickEndpoint]);
  });
});

describe('retention', () => {
  it('lists and reads events for 30 days, then the maintenance purge deletes them', async () => {
    const s = await scene('retention');
    await emit(endpointDisabled(s, newId('endpoint', h.clock)));
    const [event] = (await list(s)).json.data;
    h.clock.advance(30 * DAY - SECOND);
    expect(eventIds(await list(s))).toEqual([event.id]);
    expect((await h.request('GET', `/events/${event.id}`, { key: s.team.key })).status).toBe(200);
    await h.services.events.purgeExpired(); // earlier tests' events are older and go; this one stays
    const stored = 'SELECT 1 FROM operational_events WHERE id = $1';
    expect(await h.services.db.query(stored, [event.id])).toHaveLength(1);

    h.clock.advance(SECOND);
    expect((await list(s)).json.data).toEqual([]);
    const gone = await h.request('GET', `/events/${event.id}`, { key: s.team.key });
    expect(gone.status).toBe(404);
    expect(await h.services.events.purgeExpired(1)).toBeGreaterThanOrEqual(1); // one small batch after another
    expect(await h.services.db.query(stored, [event.id])).toEqual([]);
  });
});
