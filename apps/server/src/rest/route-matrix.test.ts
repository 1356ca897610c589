import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, uniqueKey, type Harness, type TestTeam } from '../testing/harness.js';
import type { RouteSpec } from './route.js';

/**
 * The common rules, checked on every declared route (create, read, list, patch, delete and the actions),
 * so a new route cannot forget one.
 */
let h: Harness;
let owner: TestTeam;
let intruder: TestTeam;
const ids: Record<string, string> = {};
/** Named path parameters other than :id. */
const params: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness();
  owner = await h.newTeam('owner');
  intruder = await h.newTeam('intruder');
  const tenant = await post(h, '/tenants', { external_id: 'matrix', name: 'Matrix' }, { key: owner.key });
  const eventType = await post(h, '/event_types', { name: 'matrix.event' }, { key: owner.key });
  const endpoint = await post(
    h,
    '/endpoints',
    { tenant_id: tenant.json.id, url: 'https://matrix.example.com/' },
    { key: owner.key },
  );
  ids['tenants'] = tenant.json.id;
  ids['event_types'] = eventType.json.id;
  ids['endpoints'] = endpoint.json.id;
  const message = await post(
    h,
    '/messages',
    { tenant_id: tenant.json.id, event_type: 'matrix.event', payload: { matrix: true } },
    { key: owner.key },
  );
  ids['messages'] = message.json.id;
  const [delivery] = await h.services.db.query('SELECT id FROM deliveries WHERE message_id = $1', [message.json.id]);
  ids['deliveries'] = delivery.id;
  const source = await post(
    h,
    '/sources',
    { tenant_id: tenant.json.id, name: 'Matrix', verification: { kind: 'bearer' }, event_type: 'matrix.event' },
    { key: owner.key },
  );
  ids['sources'] = source.json.id;
  const replay = await post(h, '/replays', { endpoint_id: endpoint.json.id }, { key: owner.key });
  ids['replays'] = replay.json.id;
  const disabled = { endpoint_id: endpoint.json.id, reason: 'endpoint_gone' };
  await h.services.db.transaction((tx) =>
    h.services.events.emit(tx, [
      {
        type: 'webhooks.endpoint.disabled',
        teamId: owner.teamId,
        tenantId: tenant.json.id,
        resourceId: endpoint.json.id,
        data: disabled,
      },
    ]),
  );
  const portal = await post(h, `/tenants/${tenant.json.id}/portal_sessions`, {}, { key: owner.key });
  params['session_id'] = portal.json.id;
  const [event] = await h.services.db.query('SELECT id FROM operational_events WHERE team_id = $1', [owner.teamId]);
  ids['events'] = event.id;

  // The platform API names its parameters as its spec does ({endpoint_id}, {environment_id}, ...).
  const environment = await post(h, '/platform/feature_flags/environments', { name: 'matrix' }, { key: owner.key });
  params['environment_id'] = environment.json.id;
  const flag = await h.request('PUT', `/platform/feature_flags/environments/${environment.json.id}/flags/matrix.flag`, {
    key: owner.key,
    idempotencyKey: uniqueKey(),
    body: { enabled: true },
  });
  params['flag_key'] = flag.json.key;
  const subscription = await post(
    h,
    '/platform/event_subscriptions',
    { url: 'https://matrix.example.com/flags', events: ['feature_flags.*'], environment_ids: [environment.json.id] },
    { key: owner.key },
  );
  params['endpoint_id'] = subscription.json.id;
  await h.request('PUT', `/platform/feature_flags/environments/${environment.json.id}/flags/matrix.second`, {
    key: owner.key,
    idempotencyKey: uniqueKey(),
    body: { enabled: false },
  });
  const [platformDelivery] = await h.services.db.query(
    'SELECT id, event_id FROM subscription_deliveries WHERE subscription_id = $1',
    [subscription.json.id],
  );
  params['delivery_id'] = platformDelivery.id;
  params['event_id'] = platformDelivery.event_id;
});
afterAll(async () => {
  await h.close();
});

/** Query parameters a route requires (GET /analytics: its window). */
const queries: Record<string, string> = {
  analytics: '?created_after=2026-11-01T00:00:00Z&created_before=2026-11-02T00:00:00Z',
};

function pathOf(route: RouteSpec): string {
  const resource = route.path.split('/')[1]!;
  return (
    route.path
      .replace(':id', ids[resource] ?? 'wdx_missing')
      .replace(/:([a-z_]+)/g, (_match, name: string) => params[name] ?? 'wdx_missing') + (queries[resource] ?? '')
  );
}

/** Bodies that pass a route's input schema where {} does not (so the checks after it are reached). */
const minimalBodies: Record<string, unknown> = {
  'PUT /platform/feature_flags/environments/:environment_id/flags/:flag_key': { enabled: true },
};
const bodyOf = (route: RouteSpec) =>
  hasBody(route) ? (minimalBodies[`${route.method} ${route.path}`] ?? {}) : undefined;

const hasBody = (route: RouteSpec) => route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
const routes = () => h.built.routes.map((route) => [`${route.method} ${route.path}`, route] as const);

describe('common rules on every route', () => {
  it('covers every kind of route', () => {
    const methods = new Set(h.built.routes.map((r) => r.method));
    expect([...methods].sort()).toEqual(['DELETE', 'GET', 'PATCH', 'POST', 'PUT']);
    expect(h.built.routes.length).toBeGreaterThanOrEqual(20);
  });

  it('checks Svc-Mode before anything else, then authentication, on every route', async () => {
    for (const [name, route] of routes()) {
      h.clock.advance(1000);
      const mode = await h.request(route.method, pathOf(route), { key: null, headers: { 'svc-mode': 'test' } });
      expect(mode.json.error.code, name).toBe('unsupported_mode');
      const badMode = await h.request(route.method, pathOf(route), { key: null, headers: { 'svc-mode': 'sandbox' } });
      expect(badMode.json.error, name).toMatchObject({ code: 'invalid_field', field: 'Svc-Mode' });
      const anonymous = await h.request(route.method, pathOf(route), { key: null });
      expect(anonymous.status, name).toBe(401);
      expect(anonymous.json.error.code, name).toBe('unauthorized');
    }
  });

  it('answers 403 account_suspended for a suspended team on every route', async () => {
    const suspended = await h.newTeam('suspended');
    await h.services.teams.setSuspension(suspended.teamId, { suspended: true, webhooksSuspended: false });
    for (const [name, route] of routes()) {
      const response = await h.request(route.method, pathOf(route), {
        key: suspended.key,
        idempotencyKey: uniqueKey(),
        body: hasBody(route) ? {} : undefined,
      });
      expect(response.status, name).toBe(403);
      expect(response.json.error.code, name).toBe('account_suspended');
    }
  });

  it("answers 404 for another team's resource on every route with an ID", async () => {
    for (const [name, route] of routes().filter(([, r]) => r.path.includes(':'))) {
      h.clock.advance(1000);
      const response = await h.request(route.method, pathOf(route), {
        key: intruder.key,
        idempotencyKey: uniqueKey(),
        ifMatch: '"wd:x:1"',
        body: bodyOf(route),
      });
      expect(response.status, name).toBe(404);
      expect(response.json.error.code, name).toBe('not_found');
    }
  });

  it('enforces the body rules (415, 400, 413, 422 unknown field) on every route with a body', async () => {
    for (const [name, route] of routes().filter(([, r]) => hasBody(r))) {
      h.clock.advance(1000);
      const common = { key: owner.key, idempotencyKey: uniqueKey(), ifMatch: '"wd:x:1"' };
      const text = await h.request(route.method, pathOf(route), {
        ...common,
        headers: { 'content-type': 'text/plain' },
        body: '{}',
        raw: true,
      });
      expect(text.status, name).toBe(415);
      const broken = await h.request(route.method, pathOf(route), { ...common, body: '{"a":', raw: true });
      expect(broken.json.error.code, name).toBe('invalid_json');
      const duplicate = await h.request(route.method, pathOf(route), { ...common, body: '{"a":1,"a":1}', raw: true });
      expect(duplicate.json.error.code, name).toBe('invalid_json');
      const array = await h.request(route.method, pathOf(route), { ...common, body: '[]', raw: true });
      expect(array.json.error.code, name).toBe('invalid_json');
      const huge = await h.request(route.method, pathOf(route), {
        ...common,
        body: `{"x":"${'a'.repeat(1_048_576)}"}`,
        raw: true,
      });
      expect(huge.status, name).toBe(413);
      if (route.input) {
        h.clock.advance(1000);
        const unknown = await h.request(route.method, pathOf(route), {
          ...common,
          ifMatch: undefined,
          body: { surely_unknown_field: 1 },
        });
        // Routes with If-Match answer 428 first when it is missing; with a (stale) one they reach the fields.
        const withIfMatch = route.ifMatch
          ? await h.request(route.method, pathOf(route), { ...common, body: { surely_unknown_field: 1 } })
          : unknown;
        expect(withIfMatch.json.error, name).toMatchObject({ code: 'invalid_field', field: 'surely_unknown_field' });
      }
    }
  });

  it('requires Idempotency-Key on every idempotent POST and If-Match on every conditional route', async () => {
    for (const [name, route] of routes()) {
      h.clock.advance(1000);
      if (route.idempotent) {
        const missing = await h.request(route.method, pathOf(route), { key: owner.key, ifMatch: '"wd:x:1"', body: {} });
        expect(missing.json.error, name).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
      }
      if (route.ifMatch) {
        // 'optional': the service decides (PUT of an existing flag needs it; DELETE and rotate honour it if sent).
        if (route.ifMatch === true) {
          const missing = await h.request(route.method, pathOf(route), {
            key: owner.key,
            idempotencyKey: uniqueKey(),
            body: hasBody(route) ? {} : undefined,
          });
          expect(missing.status, name).toBe(428);
        }
        const malformed = await h.request(route.method, pathOf(route), {
          key: owner.key,
          idempotencyKey: uniqueKey(),
          ifMatch: 'no-quotes',
          body: hasBody(route) ? {} : undefined,
        });
        expect(malformed.json.error, name).toMatchObject({ code: 'invalid_field', field: 'If-Match' });
        const stale = await h.request(route.method, pathOf(route), {
          key: owner.key,
          idempotencyKey: uniqueKey(),
          ifMatch: '"wd:stale:0"',
          body: bodyOf(route) ?? {},
        });
        expect(stale.status, name).toBe(412);
        expect(stale.headers.get('etag'), name).toMatch(/^"wd:/);
      }
      const takesKey = route.method === 'POST' || route.method === 'PUT';
      expect(
        takesKey ? route.idempotent || route.path === '/previews' : !route.idempotent,
        `${name}: only POST and PUT routes take Idempotency-Key, all but /previews`,
      ).toBe(true);
    }
  });

  it('puts Request-Id on every successful read and list', async () => {
    for (const [name, route] of routes().filter(([, r]) => r.method === 'GET')) {
      h.clock.advance(1000);
      const response = await h.request('GET', pathOf(route), { key: owner.key });
      expect(response.status, name).toBe(200);
      expect(response.headers.get('request-id'), name).toMatch(/^req_/);
    }
  });
});
