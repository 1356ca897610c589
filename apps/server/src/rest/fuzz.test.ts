import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let tenantId: string;
let eventTypeId: string;
beforeAll(async () => {
  h = await startHarness();
  const tenant = await h.services.tenants.createTenant(
    { actor: h.team },
    {
      external_id: 'fuzz',
      name: 'Fuzz',
      metadata: {},
    },
  );
  tenantId = tenant.id;
  const eventType = await h.services.eventTypes.createEventType(
    { actor: h.team },
    { name: 'fuzz.event', description: '', example: null },
  );
  eventTypeId = eventType.id;
});
afterAll(async () => {
  await h.close();
});

const FIELD_NAMES = [
  'external_id',
  'name',
  'metadata',
  'description',
  'example',
  'archived',
  'payload_retention_days',
  'response_body_logging',
  'response_retention_days',
  'limit',
  'cursor',
  '__proto__',
  'constructor',
  '',
];

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const fieldValue = fc.oneof(jsonValue, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.double());
const objectBody = fc
  .dictionary(fc.constantFrom(...FIELD_NAMES), fieldValue, { maxKeys: 5 })
  .map((o) => JSON.stringify(o));
const body = fc.oneof(
  objectBody,
  jsonValue.map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constant('{"a":1,"a":2}'),
  fc.constant(''),
  fc.nat({ max: 3000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
);

const headerValue = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom('live', 'test', '"wd:x:1"', 'application/json', '*'),
);
const headers = fc.record(
  {
    authorization: fc.oneof(fc.constant('VALID'), fc.constant('Bearer svc_sk_nope'), headerValue),
    'svc-mode': headerValue,
    'content-type': fc.oneof(fc.constant('application/json'), headerValue),
    'idempotency-key': headerValue,
    'if-match': fc.oneof(fc.constant('CURRENT'), headerValue),
    'x-random': headerValue,
  },
  { requiredKeys: [] },
);

function printable(value: string): boolean {
  // fetch refuses header values with control characters or non-Latin-1; those never reach a server.
  return /^[\x20-\x7e]*$/.test(value) && value.trim() === value;
}

describe('every route under random headers and bodies', () => {
  it('never answers 5xx and never hangs', async () => {
    // Every declared route, with real IDs so requests reach the services, plus a few paths that match nothing.
    const idFor = (path: string) => (path.startsWith('/tenants') ? tenantId : eventTypeId);
    const targets: (readonly [string, string])[] = [
      ...h.built.routes.map((route) => [route.method, route.path.replace(':id', idFor(route.path))] as const),
      ['DELETE', '/tenants/wdt_x'],
      ['GET', '/tenants?limit=x&cursor=%00'],
      ['POST', '/nothing'],
      ['GET', '/openapi.json'],
    ];
    const paths = () => targets;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...paths()),
        headers,
        fc.option(body, { nil: undefined }),
        async ([method, path], rawHeaders, payload) => {
          h.clock.advance(1000);
          const sent: Record<string, string> = {};
          for (const [name, value] of Object.entries(rawHeaders)) {
            if (value === undefined) continue;
            if (value === 'VALID') sent[name] = `Bearer ${h.team.key}`;
            else if (value === 'CURRENT') sent[name] = `"wd:${tenantId}:1"`;
            else if (printable(value)) sent[name] = value;
          }
          const response = await h.request(method, path, {
            key: null,
            headers: sent,
            ...(payload !== undefined && method !== 'GET' ? { body: payload, raw: true } : {}),
          });
          expect(response.status, `${method} ${path} ${JSON.stringify(sent)} -> ${response.text}`).toBeLessThan(500);
          if (response.status >= 400) expect(typeof response.json?.error?.code).toBe('string');
        },
      ),
      { numRuns: 1500 },
    );
  }, 120_000);
});
