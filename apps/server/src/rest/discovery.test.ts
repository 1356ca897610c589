import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('the printed URLs', () => {
  it('GET /v1 describes the REST API: version, where the OpenAPI document is and every route', async () => {
    const index = await h.request('GET', '', { key: null });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^application\/json/);
    expect(index.json).toMatchObject({
      version: '2026-10-09',
      openapi_url: expect.stringMatching(/\/v1\/openapi\.json$/),
    });
    expect(index.json.service).toMatch(/webhook/i);
    const routes = (index.json.routes as { method: string; path: string }[]).map((r) => `${r.method} ${r.path}`);
    expect(routes).toEqual(expect.arrayContaining(['POST /tenants', 'PATCH /endpoints/{id}', 'GET /settings']));
    expect(routes).toHaveLength(h.built.routes.length);
    // The document it points to is served where it says.
    const openApi = await fetch(index.json.openapi_url.replace(/^https?:\/\/[^/]+/, h.rootUrl));
    expect(openApi.status).toBe(200);
  });

  it('GET /v1/platform says what the platform API is and lists every route of its spec as served', async () => {
    const platform = await h.request('GET', '/platform', { key: null });
    expect(platform.status).toBe(200);
    expect(platform.json).toMatchObject({ status: 'available', version: '2026-10-09', coming: [] });
    for (const route of [
      'POST /event_subscriptions',
      'GET /event_subscriptions',
      'GET /event_subscriptions/{endpoint_id}',
      'PATCH /event_subscriptions/{endpoint_id}',
      'DELETE /event_subscriptions/{endpoint_id}',
      'POST /event_subscriptions/{endpoint_id}/rotate_secret',
      'POST /event_subscriptions/{endpoint_id}/test',
      'GET /event_subscriptions/{endpoint_id}/deliveries',
      'POST /event_subscriptions/{endpoint_id}/deliveries/{delivery_id}/retry',
      'GET /events',
      'GET /events/{event_id}',
      'PUT /feature_flags/environments/{environment_id}/flags/{flag_key}',
    ]) {
      const [method, path] = route.split(' ');
      expect(platform.json.routes, route).toContainEqual(expect.objectContaining({ method, path }));
    }
    expect(platform.json.description).toMatch(/event subscriptions/i);
    expect(platform.json.description).toMatch(/feature flag/i);
    expect(platform.json.routes).toContainEqual(
      expect.objectContaining({ method: 'GET', path: '/meta/usage', operation_id: 'getUsage' }),
    );
    const usage = await h.request(
      'GET',
      `${platform.json.base_url.replace(/^https?:\/\/[^/]+/, h.rootUrl)}/meta/usage`,
    );
    expect(usage.status).toBe(200);
  });

  it('keeps the common first check (Svc-Mode) and answers unknown paths below them with 404', async () => {
    const mode = await h.request('GET', '', { key: null, headers: { 'svc-mode': 'test' } });
    expect(mode.json.error.code).toBe('unsupported_mode');
    const missing = await h.request('GET', '/platform/nothing_here');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('not_found');
  });
});
