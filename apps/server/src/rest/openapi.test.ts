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
    const declared = h.built.routes.length + h.built.unauthenticated.length;
    expect(operations.length).toBe(declared);
    for (const route of operations) expect(described, `${route} is described`).toContain(route);
    expect(described.size).toBe(declared);
  });

  it('declares request bodies, the Idempotency-Key and If-Match headers, and error responses', async () => {
    const { json } = await h.request('GET', '/openapi.json', { key: null });
    const create = json.paths['/tenants'].post;
    expect(create.parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }),
    );
    const body = resolve(json, create.requestBody.content['application/json'].schema);
    expect(body.required).toEqual(['external_id', 'name']);
    expect(body.additionalProperties).toBe(false);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '401', '409', '422', '429']));
    const patch = json.paths['/tenants/{id}'].patch;
    expect(patch.parameters).toContainEqual(
      expect.objectContaining({ name: 'If-Match', in: 'header', required: true }),
    );
    // Where the value comes from, for a generated client's docs.
    const ifMatch = patch.parameters.find((p: { name: string }) => p.name === 'If-Match');
    expect(ifMatch.description).toContain('ETag header from GET /tenants/{id}');
  });

  it('names its schemas as components and refers to them from the operations', async () => {
    const { json } = await h.request('GET', '/openapi.json', { key: null });
    const schemas = json.components.schemas;
    for (const name of [
      'Tenant',
      'TenantList',
      'EventType',
      'Endpoint',
      'EndpointWithSecret',
      'EndpointPreview',
      'Error',
      'Settings',
      'Capabilities',
      'Rates',
      'CreateTenantRequest',
      'UpdateEndpointRequest',
    ])
      expect(Object.keys(schemas), name).toContain(name);
    const schemaOf = (op: Operation, status: string) => op.responses[status]?.content?.['application/json']?.schema;
    expect(schemaOf(json.paths['/tenants/{id}'].get, '200')).toEqual({ $ref: '#/components/schemas/Tenant' });
    expect(schemaOf(json.paths['/tenants'].get, '200')).toEqual({ $ref: '#/components/schemas/TenantList' });
    expect(schemas.TenantList.properties.data.items).toEqual({ $ref: '#/components/schemas/Tenant' });
    expect(schemaOf(json.paths['/settings'].get, '200')).toEqual({ $ref: '#/components/schemas/Settings' });
    expect(schemaOf(json.paths['/capabilities'].get, '200')).toEqual({ $ref: '#/components/schemas/Capabilities' });
    expect(schemaOf(json.paths['/endpoints'].post, '201')).toEqual({
      $ref: '#/components/schemas/EndpointWithSecret',
    });
    expect(schemaOf(json.paths['/tenants'].post, '422')).toEqual({ $ref: '#/components/schemas/Error' });
    // Every reference resolves, and nothing is left pointing at zod's local definitions.
    const text = JSON.stringify(json);
    expect(text).not.toContain('#/$defs/');
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g))
      expect(schemas[name!], `${name} is defined`).toBeDefined();
    // Fields are described, request and response alike.
    expect(schemas.Tenant.description).toBeTruthy();
    expect(schemas.Tenant.properties.external_id.description).toBeTruthy();
    expect(schemas.Endpoint.properties.has_authorization.description).toBeTruthy();
    expect(schemas.CreateEndpointRequest.properties.url.description).toBeTruthy();
    expect(schemas.Tenant.properties.created_at.format).toBe('date-time');
  });

  it('tags every operation and types its query parameters', async () => {
    const { json } = await h.request('GET', '/openapi.json', { key: null });
    const tags = json.tags.map((t: { name: string }) => t.name);
    expect(tags).toEqual(expect.arrayContaining(['Tenants', 'Event types', 'Endpoints', 'Settings', 'Catalog']));
    const tagOf: Record<string, string> = {};
    for (const operations of Object.values(json.paths as Record<string, Record<string, Operation>>))
      for (const op of Object.values(operations)) {
        expect(op.tags, op.operationId).toHaveLength(1);
        expect(tags, op.operationId).toContain(op.tags[0]);
        tagOf[op.operationId] = op.tags[0]!;
      }
    expect(tagOf).toMatchObject({
      createTenant: 'Tenants',
      listEventTypes: 'Event types',
      rotateEndpointSecret: 'Endpoints',
      previewEndpoint: 'Endpoints',
      updateSettings: 'Settings',
      getCapabilities: 'Catalog',
      getRates: 'Catalog',
    });
    for (const path of ['/tenants', '/event_types', '/endpoints']) {
      const parameters = json.paths[path].get.parameters as Parameter[];
      const limit = parameters.find((p) => p.name === 'limit');
      expect(limit, path).toMatchObject({
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 200 },
      });
      expect(limit?.description).toMatch(/default 50/);
      expect(parameters.find((p) => p.name === 'cursor')).toMatchObject({ schema: { type: 'string' } });
    }
    const status = (json.paths['/endpoints'].get.parameters as Parameter[]).find((p) => p.name === 'status');
    expect(status?.schema).toEqual({ type: 'string', enum: ['enabled', 'paused', 'disabled'] });
  });
});

interface Operation {
  operationId: string;
  tags: string[];
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema: Record<string, unknown>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function resolve(document: any, schema: { $ref?: string }): any {
  if (!schema.$ref) return schema;
  return document.components.schemas[schema.$ref.replace('#/components/schemas/', '')];
}
