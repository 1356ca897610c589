import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_KEY_PATTERN, RawJson, STRONG_ETAG } from '@svc/core';
import { DISCOVERY_PATHS } from '../app.js';
import { post, startHarness, type Harness } from '../testing/harness.js';
import type { RouteSpec } from './route.js';
import { ErrorShape } from './shapes.js';

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

describe('OpenAPI document says what the server enforces', () => {
  it('gives headers, names, IDs, message bodies and subscription events the rules the server checks', async () => {
    const { json } = await h.request('GET', '/openapi.json', { key: null });
    const parameter = (path: string, method: string, name: string) =>
      (json.paths[path][method].parameters as Parameter[]).find((p) => p.name === name)!;
    const tenant = await post(h, '/tenants', { external_id: 'openapi-rules', name: 'Rules' });
    const etag = tenant.headers.get('etag')!;

    const ifMatch = parameter('/tenants/{id}', 'patch', 'If-Match');
    expect(ifMatch.schema['pattern']).toBe(STRONG_ETAG.source);
    expect(new RegExp(ifMatch.schema['pattern'] as string).test(etag)).toBe(true);
    expect(new RegExp(ifMatch.schema['pattern'] as string).test('W/"weak"')).toBe(false);
    const key = parameter('/tenants', 'post', 'Idempotency-Key');
    expect(key.schema).toMatchObject({ minLength: 1, maxLength: 128, pattern: IDEMPOTENCY_KEY_PATTERN.source });
    expect(new RegExp(key.schema['pattern'] as string).test('caf\u00e9')).toBe(false);

    const schemas = json.components.schemas;
    expect(schemas.CreateTenantRequest.properties.name).toMatchObject({ minLength: 1, maxLength: 128 });
    expect(schemas.CreateEndpointRequest.properties.name).toMatchObject({ minLength: 1, maxLength: 128 });
    expect(schemas.CreateEventSubscriptionRequest.properties.events.uniqueItems).toBe(true);
    expect(schemas.CreateEndpointRequest.properties.events.uniqueItems).toBe(true);
    expect(schemas.CreateMessageRequest.oneOf).toEqual([{ required: ['payload'] }, { required: ['body_base64'] }]);

    // ID path parameters: the pattern of their kind, which real IDs match; a malformed one is documented as 404.
    const id = parameter('/tenants/{id}', 'get', 'id');
    expect(id.schema['pattern']).toBe('^wdt_[0-9a-z]{26}$');
    expect(new RegExp(id.schema['pattern'] as string).test(tenant.json.id)).toBe(true);
    expect(json.paths['/tenants/{id}'].get.responses['404']).toBeDefined();
    expect(parameter('/platform/event_subscriptions/{endpoint_id}', 'get', 'endpoint_id').schema['pattern']).toBe(
      '^whe_[0-9a-z]{26}$',
    );
    for (const [path, operations] of Object.entries(json.paths as Record<string, Record<string, Operation>>))
      for (const op of Object.values(operations))
        for (const p of (op as unknown as { parameters: Parameter[] }).parameters.filter((q) => q.in === 'path'))
          expect(p.schema['pattern'], `${path} ${p.name}`).toEqual(expect.any(String));

    // Svc-Mode's 422 on every route, GET included; idempotency conflicts on cancel and redact.
    for (const operations of Object.values(json.paths as Record<string, Record<string, Operation>>))
      for (const op of Object.values(operations)) expect(Object.keys(op.responses), op.operationId).toContain('422');
    for (const path of ['/messages/{id}/cancel', '/messages/{id}/redact']) {
      const conflict = json.paths[path].post.responses['409'];
      expect(conflict.description).toContain('idempotency_conflict');
      expect(Object.keys(conflict.content['application/json'].examples)).toEqual(
        expect.arrayContaining(['idempotency_conflict', 'request_in_progress']),
      );
    }
  });

  it('documents every status each route can answer, derived from its declaration', async () => {
    const { json } = await h.request('GET', '/openapi.json', { key: null });
    for (const route of h.built.routes) {
      const expected = new Set<number>([
        401,
        403,
        422,
        500,
        400,
        413,
        415,
        ...Object.keys(route.responses).map(Number),
      ]);
      if (route.rateClass !== 'none') expected.add(429);
      if (route.ifMatch) for (const status of [412, 428]) expected.add(status);
      if (route.idempotent) expected.add(409);
      if (/:(?!flag_key)\w+/.test(route.path)) expected.add(404);
      const documented = Object.keys(operationOf(json, route).responses).map(Number);
      expect(documented, `${route.method} ${route.path}`).toEqual(expect.arrayContaining([...expected]));
    }
  });

  it("gives every operation request and response examples that the route's own schemas accept", async () => {
    const { json } = await h.request('GET', '/openapi.json', { key: null });
    for (const route of h.built.routes) {
      const op = operationOf(json, route);
      const name = `${route.method} ${route.path}`;
      if (route.input) {
        const example = op.requestBody!.content['application/json']!.example as Record<string, unknown>;
        expect(example, name).toBeDefined();
        const body = Object.fromEntries(
          Object.entries(example).map(([field, value]) => [
            field,
            route.rawFields?.includes(field) && value !== null ? new RawJson(JSON.stringify(value)) : value,
          ]),
        );
        const parsed = route.input.safeParse(body);
        expect(parsed.error?.issues, `${name} request example`).toBeUndefined();
      }
      for (const [status, response] of Object.entries(op.responses)) {
        const media = response.content?.['application/json'];
        if (!media) continue;
        if (Number(status) < 400) {
          const parsed = route.responses[Number(status)]!.safeParse(media.example);
          expect(parsed.error?.issues, `${name} ${status} example`).toBeUndefined();
        } else {
          const examples = Object.values(media.examples ?? {});
          expect(examples.length, `${name} ${status} examples`).toBeGreaterThan(0);
          for (const example of examples) expect(ErrorShape.safeParse(example.value).success).toBe(true);
        }
      }
      for (const p of (op as unknown as { parameters: Parameter[] }).parameters.filter((q) => q.in === 'path'))
        expect(new RegExp(p.schema['pattern'] as string).test(p.example as string), `${name} ${p.name}`).toBe(true);
    }
  });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function operationOf(document: any, route: RouteSpec): Operation {
  return document.paths[route.path.replace(/:([A-Za-z_]+)/g, '{$1}')][route.method.toLowerCase()];
}

interface MediaType {
  schema: unknown;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

interface Operation {
  operationId: string;
  tags: string[];
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { description: string; content?: Record<string, MediaType> }>;
}

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema: Record<string, unknown>;
  example?: unknown;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function resolve(document: any, schema: { $ref?: string }): any {
  if (!schema.$ref) return schema;
  return document.components.schemas[schema.$ref.replace('#/components/schemas/', '')];
}
