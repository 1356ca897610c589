import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';

let h: Harness;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let document: any;
/** Real IDs by prefix, so requests reach the operations themselves and not only their 404. */
const realIds = new Map<string, string>();

beforeAll(async () => {
  h = await startHarness();
  document = (await h.request('GET', '/openapi.json', { key: null })).json;
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  const tenant = await post(h, '/tenants', { external_id: 'statuses', name: 'Statuses' });
  const eventType = await post(h, '/event_types', { name: 'invoice.paid' });
  const endpoint = await post(h, '/endpoints', { tenant_id: tenant.json.id, url: 'https://receiver.example.com/s' });
  const message = await post(h, '/messages', { tenant_id: tenant.json.id, event_type: 'invoice.paid', payload: {} });
  const source = await post(h, '/sources', {
    tenant_id: tenant.json.id,
    name: 'statuses',
    verification: { kind: 'bearer' },
    event_type: 'invoice.paid',
  });
  const environment = await post(h, '/platform/feature_flags/environments', { name: 'statuses' });
  const subscription = await post(h, '/platform/event_subscriptions', {
    url: 'https://receiver.example.com/flags',
    events: ['feature_flags.*'],
    environment_ids: [environment.json.id],
  });
  const deliveries = await h.request('GET', `/deliveries?message_id=${message.json.id}`);
  for (const created of [tenant, eventType, endpoint, message, source, environment, subscription]) {
    expect(created.status, created.text).toBeLessThan(300);
    realIds.set((created.json.id as string).split('_')[0]!, created.json.id as string);
  }
  const delivery = deliveries.json.data[0].id as string;
  realIds.set('wdd', delivery);
});
afterAll(async () => {
  await h.close();
});

interface Parameter {
  name: string;
  in: string;
  schema: { pattern?: string };
  example?: string;
}

interface Operation {
  operationId: string;
  parameters: Parameter[];
  requestBody?: { content: Record<string, { example?: unknown; schema?: unknown }> };
  responses: Record<string, unknown>;
}

/** One request of the fuzz: what differs from a well-formed request of the operation. */
interface Variant {
  name: string;
  ids?: 'real' | 'unknown' | 'malformed' | 'nul';
  key?: string | null;
  headers?: Record<string, string>;
  body?: string | null;
  contentType?: string;
  query?: string;
  idempotencyKey?: string | null;
  ifMatch?: string | null;
}

const HOSTILE: Variant[] = [
  { name: 'as documented' },
  { name: 'unknown IDs', ids: 'unknown' },
  { name: 'malformed IDs', ids: 'malformed' },
  { name: 'a NUL in IDs', ids: 'nul' },
  { name: 'no key', key: null },
  { name: 'a wrong key', key: 'svc_sk_wrong' },
  { name: 'Svc-Mode test', headers: { 'svc-mode': 'test' } },
  { name: 'Svc-Mode bogus', headers: { 'svc-mode': 'bogus' } },
  { name: 'not JSON', body: '{"a":' },
  { name: 'duplicate keys', body: '{"a":1,"a":2}' },
  { name: 'not an object', body: '[1,2]' },
  { name: 'text/plain', body: 'hello', contentType: 'text/plain' },
  { name: 'over 1 MiB', body: `{"name":"${'x'.repeat(1_100_000)}"}` },
  { name: 'no Idempotency-Key', idempotencyKey: null },
  { name: 'a bad Idempotency-Key', idempotencyKey: 'k'.repeat(129) },
  { name: 'no If-Match', ifMatch: null },
  { name: 'a malformed If-Match', ifMatch: 'W/"weak"' },
  { name: 'unknown query parameter', query: 'bogus=1' },
  { name: 'a bad limit', query: 'limit=0' },
  { name: 'a bad cursor', query: 'cursor=zzz' },
];

/** Bodies of random fields and values, from a fixed seed so every run sends the same requests. */
function randomBodies(operation: Operation, count: number): string[] {
  const fields = ['name', 'tenant_id', 'url', 'events', 'payload', 'status', 'metadata', 'description', 'bogus'];
  const example = operation.requestBody?.content['application/json']?.example;
  if (example && typeof example === 'object') fields.push(...Object.keys(example));
  const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null));
  const body = fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: 4 }).map((o) => JSON.stringify(o));
  return fc.sample(body, { numRuns: count, seed: operation.operationId.length * 7919 });
}

function pathWith(path: string, operation: Operation, ids: Variant['ids']): string {
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const parameter = operation.parameters.find((p) => p.name === name && p.in === 'path')!;
    const example = parameter.example ?? 'x';
    if (ids === 'malformed') return 'nope';
    if (ids === 'nul') return `${example.slice(0, 4)}%00`;
    const prefix = example.split('_')[0]!;
    return ids === 'unknown' ? example : (realIds.get(prefix) ?? example);
  });
}

async function send(method: string, path: string, operation: Operation, variant: Variant): Promise<number> {
  const headers: Record<string, string> = { ...(variant.headers ?? {}) };
  const key = variant.key === undefined ? h.team.key : variant.key;
  if (key !== null) headers['authorization'] = `Bearer ${key}`;
  const idempotent = operation.parameters.some((p) => p.name === 'Idempotency-Key');
  const idempotencyKey = variant.idempotencyKey === undefined ? uniqueKey() : variant.idempotencyKey;
  if (idempotent && idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
  const ifMatch = operation.parameters.find((p) => p.name === 'If-Match');
  const etag = variant.ifMatch === undefined ? ifMatch?.example : variant.ifMatch;
  if (ifMatch && etag !== null && etag !== undefined) headers['if-match'] = etag;
  const example = operation.requestBody?.content['application/json']?.example;
  const body = variant.body !== undefined ? variant.body : example === undefined ? undefined : JSON.stringify(example);
  const sendsBody = method !== 'get' && body !== undefined && body !== null;
  if (sendsBody) headers['content-type'] = variant.contentType ?? 'application/json';
  const url = `${h.baseUrl}${pathWith(path, operation, variant.ids)}${variant.query ? `?${variant.query}` : ''}`;
  // The rate buckets refill as the clock moves: most requests reach the operation instead of a 429.
  h.clock.advance(250);
  const response = await fetch(url, {
    method: method.toUpperCase(),
    headers,
    body: sendsBody ? body : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('every status a route answers is documented for its operation', () => {
  it('answers hostile and random requests to every operation only with statuses its document lists', async () => {
    const violations: string[] = [];
    const seen = new Set<number>();
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, Operation>>))
      for (const [method, operation] of Object.entries(operations)) {
        const documented = new Set(Object.keys(operation.responses).map(Number));
        const random = randomBodies(operation, 4).map((body, i) => ({ name: `random body ${i}`, body }));
        // A GET sends no body: its body variants would repeat the request as documented.
        const variants = [...HOSTILE, ...random].filter((v) => method !== 'get' || v.body === undefined);
        for (const variant of variants) {
          const status = await send(method, path, operation, variant);
          seen.add(status);
          if (!documented.has(status))
            violations.push(`${method.toUpperCase()} ${path} (${operation.operationId}), ${variant.name}: ${status}`);
        }
        // The same Idempotency-Key with another body: idempotency_conflict, where the operation takes a key.
        if (operation.parameters.some((p) => p.name === 'Idempotency-Key')) {
          const key = uniqueKey();
          for (const body of ['{}', '{"name":"other"}']) {
            const status = await send(method, path, operation, { name: 'a reused key', idempotencyKey: key, body });
            seen.add(status);
            if (!documented.has(status)) violations.push(`${operation.operationId}, a reused key: ${status}`);
          }
        }
      }
    expect(violations).toEqual([]);
    // The requests reached the rules and the operations, not only one refusal.
    expect([...seen]).toEqual(expect.arrayContaining([200, 201, 202, 400, 401, 404, 409, 412, 413, 415, 422, 428]));
  });
});
