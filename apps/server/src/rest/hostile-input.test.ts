import net from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { JSON_POINTER_PATTERN } from '@svc/json';
import { post, startHarness, uniqueKey, type ApiResponse, type Harness } from '../testing/harness.js';
import { rawPost } from '../testing/raw-post.js';
import { answerClientError } from './errors.js';

/**
 * Hostile input (issue 17): patterns that backtrack, NUL bytes and lone surrogates, malformed IDs, and answers
 * from layers below the routes. Everything through the real HTTP server on a real database.
 */
let h: Harness;
let tenantId: string;
let endpointId: string;
let sourceId: string;

beforeAll(async () => {
  h = await startHarness();
  tenantId = (await post(h, '/tenants', { external_id: 'hostile', name: 'Hostile' })).json.id;
  await post(h, '/event_types', { name: 'hostile.event' });
  endpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://hostile.example.com/' })).json.id;
  sourceId = (
    await post(h, '/sources', {
      tenant_id: tenantId,
      name: 'Hostile',
      verification: { kind: 'bearer' },
      event_type: 'hostile.event',
    })
  ).json.id;
});
afterAll(async () => {
  await h.close();
});

async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = performance.now();
  const result = await run();
  return { result, ms: performance.now() - start };
}

function graphql(query: string, variables: Record<string, unknown> = {}): Promise<ApiResponse> {
  // The harness clock stands still: move it so that the rate buckets refill between requests.
  h.clock.advance(1_000);
  return h.request('POST', `${h.rootUrl}/graphql`, { body: { query, variables } });
}

/** Writes bytes as they are to the server and reads the answer until the server closes the connection. */
function rawExchange(bytes: string): Promise<string> {
  const { port, hostname } = new URL(h.rootUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

function parseRawAnswer(answer: string): { status: number; headers: Map<string, string>; body: unknown } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

describe('event_type_path: a JSON Pointer checked in linear time', () => {
  // The old pattern took 7 s for 31 characters and would take longer than the universe for 512.
  const attacks = ['/~'.repeat(256), '/'.repeat(511) + '~', '/a'.repeat(255) + '~2'];

  it.each(attacks.map((attack) => [attack.slice(0, 8), attack] as const))(
    'POST /sources with %j... (512 characters) answers 422 at once',
    async (_head, attack) => {
      const { result, ms } = await timed(() =>
        post(h, '/sources', {
          tenant_id: tenantId,
          name: 'Pointer',
          verification: { kind: 'bearer' },
          event_type_path: attack,
        }),
      );
      expect(result.status, result.text).toBe(422);
      expect(result.json.error).toMatchObject({ code: 'invalid_field', field: 'event_type_path' });
      expect(ms).toBeLessThan(2_000);
    },
  );

  it('PATCH /sources/{id} and GraphQL updateSource answer at once too', async () => {
    const attack = '/~'.repeat(256);
    const current = await h.request('GET', `/sources/${sourceId}`);
    const patched = await timed(() =>
      h.request('PATCH', `/sources/${sourceId}`, {
        ifMatch: current.headers.get('etag')!,
        body: { event_type: null, event_type_path: attack },
      }),
    );
    expect(patched.result.json.error).toMatchObject({ code: 'invalid_field', field: 'event_type_path' });
    expect(patched.ms).toBeLessThan(2_000);
    const updated = await timed(() =>
      graphql(
        'mutation ($id: ID!, $etag: String!, $path: String) { updateSource(id: $id, etag: $etag, input: { eventTypePath: $path }) { id } }',
        { id: sourceId, etag: current.headers.get('etag'), path: attack },
      ),
    );
    expect(updated.result.json.errors[0].extensions).toMatchObject({ code: 'invalid_field' });
    expect(updated.ms).toBeLessThan(2_000);
  });

  it('the OpenAPI document publishes the same linear pattern', async () => {
    const document = (await h.request('GET', '/openapi.json')).json;
    const schemas = JSON.stringify(document.components.schemas);
    expect(schemas).toContain(JSON.stringify(JSON_POINTER_PATTERN.source));
    expect(schemas).not.toContain(JSON.stringify('^(\\/([^~]|~[01])*)*$'));
  });
});

describe('headers, cursors and query parameters at their worst', () => {
  // Long runs of what a pattern accepts, ending in what it refuses; within Node's 16 KiB of headers.
  const long = (unit: string) => unit.repeat(Math.ceil(8_000 / unit.length)).slice(0, 8_000) + '!';

  it.each([
    ['Authorization', { authorization: `Bearer ${long('a')} x` }, 401],
    ['Authorization (console session)', { authorization: `Bearer svc_cs_${long('a')}` }, 401],
    ['Svc-Mode', { 'svc-mode': long('live') }, 422],
    ['Idempotency-Key', { 'idempotency-key': long(' a') + '\u00e9' }, 422],
    ['If-Match', { 'if-match': `"${long('"a')}"` }, 422],
    ['Content-Type', { 'content-type': `application/json; ${long('charset=utf-8;')}` }, 415],
  ])('%s', async (name, headers, status) => {
    const method = name === 'If-Match' ? 'PATCH' : 'POST';
    const path = name === 'If-Match' ? `/tenants/${tenantId}` : '/tenants';
    const keyless = name.startsWith('Authorization');
    const { result, ms } = await timed(() =>
      h.request(method, path, {
        ...(keyless ? { key: null } : {}),
        headers: {
          ...(name === 'Idempotency-Key' || name === 'If-Match' ? {} : { 'idempotency-key': uniqueKey() }),
          ...(headers as Record<string, string>),
        },
        body: '{"name":"x"}',
        raw: true,
      }),
    );
    expect(result.status, result.text).toBe(status);
    expect(result.headers.get('request-id')).toMatch(/^req_/);
    expect(ms).toBeLessThan(2_000);
  });

  it('cursors, limits and filters', async () => {
    for (const query of [
      `cursor=${'A'.repeat(8_000)}!`,
      `limit=${'9'.repeat(8_000)}`,
      `tenant_id=${'a'.repeat(8_000)}_!`,
      `created_after=2026-01-01T00:00:00.${'0'.repeat(8_000)}!`,
    ]) {
      const path = query.startsWith('created') || query.startsWith('tenant') ? '/messages' : '/tenants';
      const { result, ms } = await timed(() => h.request('GET', `${path}?${query}`));
      expect(result.status, `${query.slice(0, 20)}: ${result.text}`).toBe(422);
      expect(ms).toBeLessThan(2_000);
    }
  });
});

describe('IDs are checked by their shape before any query', () => {
  /** Every ID parameter of every route; flag keys keep their own rule (422 invalid_field flag_key). */
  const idRoutes = () =>
    h.built.routes.filter((route) =>
      route.path.split('/').some((part) => part.startsWith(':') && part !== ':flag_key'),
    );
  /** Bodies that pass validation, so the answer is the one of the ID. */
  const BODIES: Record<string, unknown> = {
    putFeatureFlag: { enabled: true },
  };

  function pathWith(route: { path: string }, id: (param: string) => string): string {
    return route.path.replace(/:([a-z_]+)/g, (_match, param: string) =>
      param === 'flag_key' ? 'some.flag' : id(param),
    );
  }

  function send(route: { method: string; operationId: string }, path: string): Promise<ApiResponse> {
    const hasBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
    h.clock.advance(1_000);
    return h.request(route.method, path, {
      idempotencyKey: uniqueKey(),
      ifMatch: '"wd:wdt_00000000000000000000000000:1"',
      ...(hasBody ? { body: BODIES[route.operationId] ?? {} } : {}),
    });
  }

  const MALFORMED: [string, string][] = [
    ['a NUL', '%00'],
    ['a prefix and a NUL', 'wdt_%00'],
    ['a NUL inside an ID of the right length', `wde_${'0'.repeat(12)}%00${'0'.repeat(13)}`],
    ['a 5,000-character segment', 'a'.repeat(5_000)],
    ['a lone surrogate, percent-encoded', '%ED%A0%80'],
    ['a percent sign that encodes nothing', '%zz'],
  ];

  it.each(MALFORMED)(
    '%s in any ID of a path is 404 not_found like an unknown ID',
    async (_name, malformed) => {
      const routes = idRoutes();
      expect(routes.length).toBeGreaterThan(30);
      for (const route of routes) {
        const unknown = await send(
          route,
          pathWith(route, () => `wdx_${'0'.repeat(26)}`),
        );
        const label = `${route.method} ${route.path}`;
        expect(unknown.status, `${label} (unknown): ${unknown.text}`).toBe(404);
        const answer = await send(
          route,
          pathWith(route, () => malformed),
        );
        expect(answer.status, `${label}: ${answer.text}`).toBe(404);
        expect(answer.json.error.code, label).toBe('not_found');
        expect(answer.headers.get('request-id'), label).toMatch(/^req_/);
        // The path is never echoed.
        expect(answer.text).not.toContain('aaaaaaaaaa');
      }
    },
    120_000,
  );

  it('an ID of the right shape but the wrong kind is answered like an unknown one, with the same message', async () => {
    const wrongKind = await h.request('GET', `/tenants/${endpointId}`);
    const malformed = await h.request('GET', '/tenants/wdt_%00');
    expect(malformed.status).toBe(404);
    expect(malformed.json).toEqual(wrongKind.json);
  });

  it('a malformed ID in a body is 422 invalid_field naming it', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['/endpoints', { tenant_id: 'wdt_\u0000', url: 'https://a.example.com/' }, 'tenant_id'],
      ['/endpoints', { tenant_id: 'not an id', url: 'https://a.example.com/' }, 'tenant_id'],
      ['/messages', { tenant_id: 'wdt_x', event_type: 'hostile.event', payload: {} }, 'tenant_id'],
      ['/sources', { tenant_id: 'x'.repeat(5_000), name: 'S', verification: { kind: 'bearer' } }, 'tenant_id'],
      [
        '/sources',
        { tenant_id: tenantId, name: 'S', verification: { kind: 'bearer' }, billing_key_id: 'key_\u0000' },
        'billing_key_id',
      ],
      ['/replays', { endpoint_id: 'wde_\u0000' }, 'endpoint_id'],
      ['/previews', { endpoint_id: 'wde_\u0000', payload: {} }, 'endpoint_id'],
    ];
    for (const [path, body, field] of cases) {
      h.clock.advance(1_000);
      const answer = await post(h, path, body);
      expect(answer.status, `${path} ${answer.text}`).toBe(422);
      expect(answer.json.error).toMatchObject({ code: 'invalid_field', field });
    }
  });

  it('GraphQL: a malformed ID the field acts on is not_found; a malformed filter is invalid_field', async () => {
    for (const id of ['wdt_\u0000', 'x'.repeat(5_000), '\ud800']) {
      const read = await graphql('query ($id: ID!) { tenant(id: $id) { id } }', { id });
      expect(read.status).toBe(200);
      expect(read.json.errors[0].extensions.code).toBe('not_found');
      const deleted = await graphql('mutation ($id: ID!) { deleteEndpoint(id: $id, etag: "\\"x\\"") }', { id });
      expect(deleted.json.errors[0].extensions.code).toBe('not_found');
      const filtered = await graphql('query ($id: ID) { endpoints(tenantId: $id) { nodes { id } } }', { id });
      expect(filtered.json.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'tenant_id' });
    }
    const flags = await graphql('query { featureFlags(environmentId: "ffe_\\u0000") { nodes { key } } }');
    expect(flags.json.errors[0].extensions.code).toBe('not_found');
  });
});

describe('text fields refuse NUL and lone surrogates', () => {
  const environmentPath = async () =>
    `/platform/feature_flags/environments/${(await post(h, '/platform/feature_flags/environments', { name: `env-${uniqueKey()}` })).json.id}`;
  const put = (path: string, body: unknown) => h.request('PUT', path, { idempotencyKey: uniqueKey(), body });
  const patch = async (path: string, body: unknown) =>
    h.request('PATCH', path, { ifMatch: (await h.request('GET', path)).headers.get('etag')!, body });

  /** [what, field named in the error, send the text] */
  const fields: [string, string, (text: string) => Promise<ApiResponse>][] = [
    ['tenant name', 'name', (text) => post(h, '/tenants', { external_id: uniqueKey(), name: text })],
    [
      'tenant metadata key',
      'metadata',
      (text) => post(h, '/tenants', { external_id: uniqueKey(), name: 'T', metadata: { [text]: 'v' } }),
    ],
    [
      'tenant metadata value',
      'metadata.note',
      (text) => post(h, '/tenants', { external_id: uniqueKey(), name: 'T', metadata: { note: text } }),
    ],
    ['tenant name (PATCH)', 'name', (text) => patch(`/tenants/${tenantId}`, { name: text })],
    [
      'endpoint name',
      'name',
      (text) => post(h, '/endpoints', { tenant_id: tenantId, url: 'https://a.example.com/', name: text }),
    ],
    ['endpoint description (PATCH)', 'description', (text) => patch(`/endpoints/${endpointId}`, { description: text })],
    ['event type description', 'description', (text) => post(h, '/event_types', { name: 'x.y', description: text })],
    [
      'source name',
      'name',
      (text) =>
        post(h, '/sources', { tenant_id: tenantId, name: text, verification: { kind: 'bearer' }, event_type: 'x' }),
    ],
    ['environment name', 'name', (text) => post(h, '/platform/feature_flags/environments', { name: `a${text}` })],
    [
      'flag description',
      'description',
      async (text) => put(`${await environmentPath()}/flags/f`, { enabled: true, description: text }),
    ],
    [
      'event subscription description',
      'description',
      (text) =>
        post(h, '/platform/event_subscriptions', {
          url: 'https://a.example.com/',
          events: ['feature_flags.flag.updated'],
          environment_ids: [`ffe_${'0'.repeat(26)}`],
          description: text,
        }),
    ],
    [
      'message metadata',
      'metadata.note',
      (text) => post(h, '/messages', { tenant_id: tenantId, event_type: 'hostile.event', metadata: { note: text } }),
    ],
    [
      'message external_id',
      'external_id',
      (text) => post(h, '/messages', { tenant_id: tenantId, event_type: 'hostile.event', external_id: text }),
    ],
    [
      'a query parameter',
      'external_id',
      (text) => h.request('GET', `/messages?external_id=${encodeURIComponent(text)}`),
    ],
  ];

  it.each([
    ['NUL', 'a\u0000b', /NUL/],
    ['a lone high surrogate', 'a\ud800b', /lone surrogate/],
    ['a lone low surrogate', '\udc00', /lone surrogate/],
  ])('%s: 422 invalid_field naming the field, nothing stored', async (_name, text, message) => {
    const tenantsBefore = (await h.request('GET', '/tenants?limit=200')).json.data.length;
    for (const [what, field, send] of fields) {
      // A URL cannot carry a lone surrogate (percent-encoded, it decodes to U+FFFD).
      if (what === 'a query parameter' && !text.includes('\u0000')) continue;
      h.clock.advance(1_000);
      const answer = await send(text);
      expect(answer.status, `${what}: ${answer.text}`).toBe(422);
      expect(answer.json.error, what).toMatchObject({ code: 'invalid_field', field });
      expect(answer.json.error.message, what).toMatch(message);
    }
    expect((await h.request('GET', '/tenants?limit=200')).json.data.length).toBe(tenantsBefore);
  });

  it('a surrogate pair (an emoji) is text like any other', async () => {
    const created = await post(h, '/tenants', { external_id: uniqueKey(), name: 'rocket \ud83d\ude80' });
    expect(created.status).toBe(201);
    expect((await h.request('GET', `/tenants/${created.json.id}`)).json.name).toBe('rocket \ud83d\ude80');
  });

  it('GraphQL arguments and inputs refuse them too', async () => {
    const created = await graphql(
      'mutation ($name: String!) { createTenant(input: { externalId: "gql-nul", name: $name }) { id } }',
      { name: 'a\u0000' },
    );
    expect(created.json.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'name' });
    const updated = await graphql(
      'mutation ($id: ID!, $name: String) { updateEndpoint(id: $id, etag: "\\"x\\"", input: { name: $name }) { id } }',
      { id: endpointId, name: '\ud800' },
    );
    expect(updated.json.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'name' });
    const filtered = await graphql('query ($type: String) { messages(eventType: $type) { nodes { id } } }', {
      type: 'a\u0000',
    });
    expect(filtered.json.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'event_type' });
  });

  it('message payloads keep their exact bytes: escaped NULs and lone surrogates are delivered as written', async () => {
    const payload = '{"nul":"\\u0000","half":"\\ud800","pair":"\\ud83d\\ude80"}';
    const published = await post(
      h,
      '/messages',
      `{"tenant_id":"${tenantId}","event_type":"hostile.event","payload":${payload}}`,
      { raw: true },
    );
    expect(published.status, published.text).toBe(202);
    const content = await h.request('GET', `/messages/${published.json.id}/content`);
    expect(content.status).toBe(200);
    expect(content.text).toBe(payload);
  });

  it('so do other JSON values kept as written: examples, filters and transforms', async () => {
    const example = await post(h, '/event_types', '{"name":"hostile.example","example":{"x":"\\u0000\\ud800"}}', {
      raw: true,
    });
    expect(example.status, example.text).toBe(201);
    expect(JSON.stringify(example.json.example)).toBe('{"x":"\\u0000\\ud800"}');
    const endpoint = await post(
      h,
      '/endpoints',
      `{"tenant_id":"${tenantId}","url":"https://a.example.com/","filter":{"path":"/a","op":"eq","value":"\\u0000"},` +
        '"transform":{"fields":[{"name":"x","value":"\\ud800"}]}}',
      { raw: true },
    );
    expect(endpoint.status, endpoint.text).toBe(201);
  });
});

describe('every answer has the error body and a Request-Id, from any layer', () => {
  function expectApiError(answer: ApiResponse, status: number, code: string): void {
    expect(answer.status, answer.text).toBe(status);
    expect(answer.headers.get('request-id')).toMatch(/^req_/);
    expect(answer.json).toEqual({ error: { code, message: expect.any(String) } });
  }

  it.each([
    ['a control character in a header value', 'GET /v1/tenants HTTP/1.1\r\nHost: x\r\nX-Note: a\u0001b\r\n\r\n', 400],
    ['a header name that is not a token', 'GET /v1/tenants HTTP/1.1\r\nHost: x\r\nBad Name: a\r\n\r\n', 400],
    ['a request line that is not HTTP', 'HELLO\r\n\r\n', 400],
    ['headers over 16 KiB', `GET /v1/tenants HTTP/1.1\r\nHost: x\r\nX-Note: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ])('Node refuses %s', async (_name, bytes, status) => {
    const answer = parseRawAnswer(await rawExchange(bytes));
    expect(answer.status).toBe(status);
    expect(answer.headers.get('request-id')).toMatch(/^req_/);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.body).toEqual({
      error: { code: status === 431 ? 'headers_too_large' : 'bad_request', message: expect.any(String) },
    });
  });

  it("a request that does not arrive in time (Node's request timeout) is 408 request_timeout", async () => {
    // The server's own handler of Node's client errors, on a real socket: Node's timeout of a whole request is
    // minutes, too long to wait for here.
    const server = net.createServer((socket) => {
      // The handler destroys the socket with the error, as Node's server does; Node's server listens for it.
      socket.on('error', () => undefined);
      answerClientError(
        pino({ level: 'silent' }),
        Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
        socket,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      const text = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write('POST /v1/messages HTTP/1.1\r\n'));
        let received = '';
        socket.on('data', (chunk) => (received += chunk.toString()));
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
      });
      const answer = parseRawAnswer(text);
      expect(answer.status).toBe(408);
      expect(answer.headers.get('request-id')).toMatch(/^req_/);
      expect(answer.body).toEqual({ error: { code: 'request_timeout', message: expect.any(String) } });
    } finally {
      server.close();
    }
  });

  it('a 5,000-character path parameter is 404 not_found, and the path is not echoed', async () => {
    const long = 'a'.repeat(5_000);
    for (const path of [`/tenants/${long}`, `/platform/feature_flags/environments/${long}/flags/${long}`]) {
      const answer = await h.request('GET', path);
      expectApiError(answer, 404, 'not_found');
      expect(answer.text).not.toContain('aaaaaaaaaa');
    }
  });

  it('a path that cannot be decoded is 404 not_found', async () => {
    expectApiError(await h.request('GET', '/tenants/%zz'), 404, 'not_found');
  });

  it('unknown routes, inside and outside /v1', async () => {
    expectApiError(await h.request('GET', '/nothing/here'), 404, 'not_found');
    expectApiError(await h.request('GET', `${h.rootUrl}/nothing`), 404, 'not_found');
  });

  it('bodies: too large, not JSON, of another type, nested too deeply (naming the limit)', async () => {
    expectApiError(await post(h, '/tenants', 'x'.repeat(1_048_577), { raw: true }), 413, 'body_too_large');
    expectApiError(
      await post(h, '/tenants', 'name=x', { raw: true, headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    expectApiError(await post(h, '/tenants', '{"name":', { raw: true }), 400, 'invalid_json');
    const deep = await post(h, '/tenants', '['.repeat(20_000) + ']'.repeat(20_000), { raw: true });
    expectApiError(deep, 400, 'invalid_json');
    expect(deep.json.error.message).toMatch(/nested too deeply/);
    expect(deep.json.error.message).toContain('512');
    const deepObject = await post(h, '/tenants', '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000), { raw: true });
    expect(deepObject.json.error.message).toMatch(/nested too deeply.*512/);
  });

  it('a deeply nested JSON argument of GraphQL names the limit too', async () => {
    const payload = '['.repeat(600) + ']'.repeat(600);
    const published = await graphql(
      'mutation ($input: PublishMessageInput!) { publishMessage(input: $input) { id } }',
      { input: { tenantId, eventType: 'hostile.event', payload } },
    );
    expect(published.json.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'payload' });
    expect(published.json.errors[0].message).toMatch(/nested too deeply.*512/);
  });

  it('a /graphql body that is not JSON', async () => {
    expectApiError(
      await h.request('POST', `${h.rootUrl}/graphql`, { body: '{"query":', raw: true }),
      400,
      'invalid_json',
    );
  });
});

describe('captures: what a provider sends cannot reach Postgres malformed either', () => {
  async function sourceWith(verification: Record<string, unknown>, mapping: Record<string, unknown>) {
    const created = await post(h, '/sources', {
      tenant_id: tenantId,
      name: `capture-${uniqueKey()}`,
      verification,
      ...mapping,
    });
    expect(created.status, created.text).toBe(201);
    return {
      url: `${h.baseUrl}${new URL(created.json.receive_url).pathname.replace(/^\/v1/, '')}`,
      secret: created.json.secret,
    };
  }

  it('an event type read from the body with a NUL or a lone surrogate is invalid_event_type, like an unknown one', async () => {
    const source = await sourceWith({ kind: 'bearer' }, { event_type_path: '/type' });
    const headers = { authorization: `Bearer ${source.secret}`, 'content-type': 'application/json' };
    for (const type of ['hostile.event\\u0000', 'hostile.event\\ud800', 'Hostile.Event']) {
      const answer = await rawPost(source.url, `{"type":"${type}"}`, headers);
      expect(answer.status, answer.text).toBe(422);
      expect(answer.json.error).toMatchObject({ code: 'invalid_event_type', field: 'event_type' });
    }
    const form = await rawPost(source.url, 'type=hostile.event%00', {
      ...headers,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.json.error).toMatchObject({ code: 'invalid_event_type', field: 'event_type' });
    const good = await rawPost(source.url, '{"type":"hostile.event"}', headers);
    expect(good.status, good.text).toBe(200);
  });

  it('a signed event ID with a NUL is refused with 422 invalid_field, not stored', async () => {
    const secret = 'whsec_test_payments_secret_0123456789';
    const source = await sourceWith({ kind: 'payments', secret }, { event_type: 'hostile.event' });
    const body = '{"id":"evt_\\u0000","object":"event","type":"charge.succeeded"}';
    const at = Math.floor(h.clock.now().getTime() / 1000);
    const answer = await rawPost(source.url, body, {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: at }),
    });
    expect(answer.status, answer.text).toBe(422);
    expect(answer.json.error).toMatchObject({ code: 'invalid_field', field: 'event_id' });
  });
});
