import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCOVERY_PATHS } from '../app.js';
import { startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('OpenAPI document', () => {
  it('is served at {base_url}/openapi.json as OpenAPI 3.1 and describes every served route', async () => {
    const response = await h.request('GET', '/openapi.json', { key: null });
    expect(response.status).toBe(200);
    expect(response.json.openapi).toBe('3.1.0');
    const described = new Set<string>();
    for (const [path, operations] of Object.entries(response.json.paths as Record<string, Record<string, unknown>>))
      for (const method of Object.keys(operations))
        described.add(`${method.toUpperCase()} /v1${path.replace(/\{(\w+)\}/g, ':$1')}`);
    // The discovery documents (API index, platform index, this document) need no key and are not operations.
    const discovery = new Set<string>(DISCOVERY_PATHS.map((path) => `GET ${path}`));
    const served = h.built.served.filter((route) => route.startsWith('GET /v1') || route.includes(' /v1/'));
    const operations = served.filter((route) => !discovery.has(route));
    expect(served).toEqual(expect.arrayContaining([...discovery]));
    expect(operations.length).toBe(h.built.routes.length);
    for (const route of operations) expect(described, `${route} is described`).toContain(route);
    expect(described.size).toBe(h.built.routes.length);
  });

  it('declares request bodies, the Idempotency-Key and If-Match headers, and error responses', async () => {
    const { json } = await h.request('GET', '/openapi.json', { key: null });
    const create = json.paths['/tenants'].post;
    expect(create.parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }),
    );
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['external_id', 'name']);
    expect(create.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '401', '409', '422', '429']));
    const patch = json.paths['/tenants/{id}'].patch;
    expect(patch.parameters).toContainEqual(
      expect.objectContaining({ name: 'If-Match', in: 'header', required: true }),
    );
  });
});
