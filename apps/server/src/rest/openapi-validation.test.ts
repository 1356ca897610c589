import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRules, ID_PREFIXES, isServiceError, RawJson } from '@svc/core';
import { startHarness, type Harness } from '../testing/harness.js';
import { exampleId } from './openapi-examples.js';
import { pathIdKinds } from './path-params.js';
import type { RouteSpec } from './route.js';

/**
 * The OpenAPI document against the validators (issue 27, section 4): for every query parameter and every field of
 * every request body, sample values must be accepted by both or refused by both. What a JSON Schema cannot say (a
 * host that is not public, a filter's total of conditions) is the service's to refuse and is named here.
 */
type JsonObject = Record<string, unknown>;

let h: Harness;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let document: any;
let ajv: Ajv2020;
beforeAll(async () => {
  h = await startHarness({ strictUrls: true });
  document = (await h.request('GET', '/openapi.json')).json;
  ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components });
});
afterAll(async () => {
  await h.close();
});

const ids = Object.values(ID_PREFIXES).map((prefix) => exampleId(prefix));
const TEXT_SAMPLES = [
  '',
  ' ',
  'a',
  'Z',
  '0',
  '1',
  '-1',
  '50',
  '200',
  '201',
  '1.5',
  'abc',
  '+',
  '%',
  '*',
  'é',
  'a b',
  'true',
  'false',
  'x'.repeat(64),
  'x'.repeat(65),
  'x'.repeat(128),
  'x'.repeat(129),
  'x'.repeat(257),
  'invoice.paid',
  'invoice.*',
  'Invoice.Paid',
  'a..b',
  'svc.reserved',
  'ext-1:a_b.c',
  '2026-11-02T10:00:00Z',
  '2026-11-02T10:00:00.000+01:00',
  '2026-11-02',
  '2026-11',
  '#ff00aa',
  '1.50',
  'https://example.com/hook',
  ' padded',
  'padded ',
  'svc',
  'webhooks.x',
  'svcx.y',
  '5',
  '0.25',
  '0.1234567',
  '1e3',
  ...ids,
  'wdt_' + '0'.repeat(25),
  'WDT_' + '0'.repeat(26),
  'zzz_' + '0'.repeat(26),
];
const URL_SAMPLES = [
  'https://example.com/',
  'https://example.com',
  'https://example.com:443/a?b=c@d',
  'https://example.com:8443/',
  'http://example.com/',
  'https://user@example.com/',
  'https://@example.com/',
  'https://example.com/#',
  'https://example.com/a b',
  'https://exa\tmple.com/',
  'ftp://example.com/',
  'https://10.0.0.1/',
  'https://localhost/',
  `https://example.com/${'x'.repeat(2030)}`,
  `https://example.com/${'x'.repeat(2040)}`,
  'example.com',
  '',
];
const JSON_SAMPLES: unknown[] = [
  null,
  true,
  0,
  1,
  -1,
  1.5,
  30,
  1_000,
  86_400,
  10_000_000,
  [],
  [''],
  ['a'],
  ['invoice.paid', 'invoice.paid'],
  ['*'],
  [15, 60],
  {},
  { '': 'x' },
  { a: 'b' },
  { a: 1 },
  { 'X-Custom': 'v' },
  { fields: [] },
  { fields: [{ name: 'a', from: '/a' }] },
  { fields: [{ name: 'a', value: 1 }] },
  { fields: [{ name: 'a', from: 'a' }] },
  { fields: [{ name: '', from: '/a' }] },
  { fields: [{ name: 'a', from: '/a', required: true }] },
  { fields: [{ name: 'a', from: '/a', value: 1 }] },
  { fields: [{ name: 'a' }] },
  { path: '/a', op: 'eq', value: 1 },
  { path: 'a', op: 'eq', value: 1 },
  { path: '/a', op: 'like', value: 1 },
  { path: '/a', op: 'in', value: [] },
  { path: '/a', op: 'in', value: [1] },
  { path: '/a', op: 'exists', value: 1 },
  { path: '/a', op: 'exists', value: true },
  { path: '/a', op: 'prefix', value: 1 },
  { path: '/a', op: 'gt', value: 'x' },
  { path: '/a', op: 'gt', value: {} },
  { all: [{ path: '/a', op: 'eq', value: 1 }] },
  { all: [] },
  { any: [{ path: '/a', op: 'eq', value: 1 }], all: [] },
  { not: { path: '/a', op: 'eq', value: 1 } },
  { not: [] },
  { display_name: 'Acme' },
  { accent_color: 'red' },
  { ['k'.repeat(64)]: 'v' },
  { ['k'.repeat(65)]: 'v' },
  { k: 'v'.repeat(512) },
  { k: 'v'.repeat(513) },
  { 'Bad Name': 'v' },
  { 'X-Ok': 'v'.repeat(1_025) },
  ['https://app.example.com'],
  ['https://app.example.com/'],
  ['http://localhost:3000'],
  ['HTTPS://APP.EXAMPLE.COM'],
  ['https://app.example.com:443'],
  ['https://app.example.com:8443'],
  ['http://[::1]:3000'],
  ['https://app.example.com', 'https://app.example.com'],
];

function concretePath(route: RouteSpec): string {
  const kinds = pathIdKinds(route.path);
  return route.path.replace(/:([A-Za-z_]+)/g, (_, name: string) =>
    name === 'flag_key' ? 'a-flag' : exampleId(ID_PREFIXES[kinds[name]!]),
  );
}

/** A value of a required parameter that both accept. */
function validValue(name: string): string {
  const now = h.clock.now().getTime();
  if (name === 'created_after') return new Date(now - 3_600_000).toISOString();
  if (name === 'created_before') return new Date(now).toISOString();
  throw new Error(`no valid value is known for the required parameter ${name}`);
}

const documented = (schema: JsonObject, value: unknown) => ajv.validate(schema, value);

/** A query value as the schema types it (query strings are text; an integer or boolean is written as one). */
function typed(schema: JsonObject, text: string): unknown {
  if (schema['type'] === 'integer' && /^-?\d+$/.test(text)) return Number(text);
  if (schema['type'] === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

function operationOf(route: RouteSpec): JsonObject {
  const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
  return document.paths[path][route.method.toLowerCase()];
}

/** Parameters whose values the document cannot describe whole; the server refuses more, with these reasons. */
const QUERY_SEMANTICS: Record<string, RegExp> = {
  // The window: at most 30 days, created_after before created_before (checked together, not per value).
  created_after: /window|before/,
  created_before: /window|after/,
  // GET /analytics names a resource of another team or none (an ID of the right shape that names nothing).
  tenant_id: /is not a tenant of this team/,
  endpoint_id: /is not an endpoint of this team/,
  source_id: /is not a source of this team/,
  // GET /deliveries extensions that need another parameter beside them (docs/deliveries.md, Lists).
  sequence: /send endpoint_id with sequence/,
  latest_generation: /send status failed or expired/,
};

describe('query parameters', () => {
  it('accept and refuse the same values as the server', async () => {
    const mismatches: string[] = [];
    for (const route of h.built.routes) {
      if (route.method !== 'GET') continue;
      const parameters = ((operationOf(route)['parameters'] as JsonObject[]) ?? []).filter(
        (parameter) => parameter['in'] === 'query' && parameter['name'] !== 'cursor',
      );
      // The other required parameters, with values both accept (GET /analytics needs its window).
      const required = Object.fromEntries(
        parameters
          .filter((parameter) => parameter['required'] === true)
          .map((parameter) => [parameter['name'] as string, validValue(parameter['name'] as string)]),
      );
      for (const parameter of parameters) {
        const name = parameter['name'] as string;
        const schema = parameter['schema'] as JsonObject;
        const samples = [...TEXT_SAMPLES, ...((schema['enum'] as string[]) ?? []).map(String)];
        for (const sample of samples) {
          h.clock.advance(20);
          const query = new URLSearchParams({ ...required, [name]: sample });
          const answer = await h.request('GET', `${concretePath(route)}?${query}`);
          const error = answer.json?.error;
          const refused = answer.status === 422 && error?.field === name;
          if (refused && QUERY_SEMANTICS[name]?.test(error.message)) continue;
          const inDocument = documented(schema, typed(schema, sample));
          if (inDocument === refused)
            mismatches.push(
              `${route.operationId} ?${name}=${sample.slice(0, 40)}: document ${inDocument ? 'accepts' : 'refuses'}, server ${refused ? `refuses (${error.message})` : `answers ${answer.status}`}`,
            );
        }
      }
    }
    expect(mismatches).toEqual([]);
  });
});

/** The server's verdict on one body field: its schema, then what the service checks before storing it. */
function serverRefusal(route: RouteSpec, field: string, value: unknown): string | null {
  const raw = route.rawFields?.includes(field) && value !== null ? new RawJson(JSON.stringify(value)) : value;
  const parsed = route.input!.safeParse({ [field]: raw });
  const issue = parsed.success ? undefined : parsed.error.issues.find((candidate) => candidate.path[0] === field);
  if (issue) return issue.message;
  try {
    // Whether a host is public is not a shape: 422 unsafe_url, described in the field's text.
    if (field === 'url' && typeof value === 'string') h.services.endpoints.checkUrl(value);
    if ((field === 'filter' || field === 'transform') && value !== null)
      compileRules(
        field === 'filter' ? new RawJson(JSON.stringify(value)) : null,
        field === 'transform' ? new RawJson(JSON.stringify(value)) : null,
      );
  } catch (error) {
    if (isServiceError(error)) return error.code === 'unsafe_url' ? null : error.message;
    throw error;
  }
  return null;
}

describe('request bodies', () => {
  it('accept and refuse the same field values as the server', () => {
    const mismatches: string[] = [];
    for (const route of h.built.routes) {
      if (!route.input) continue;
      const operation = operationOf(route);
      const ref = (operation['requestBody'] as JsonObject | undefined)?.['content'] as JsonObject | undefined;
      const component = ((ref?.['application/json'] as JsonObject)['schema'] as JsonObject)['$ref'] as string;
      const name = component.split('/').at(-1)!;
      const properties = Object.keys(document.components.schemas[name].properties ?? {});
      for (const field of properties) {
        const schema = { $ref: `openapi#/components/schemas/${name}/properties/${field}` };
        const samples =
          field === 'url' || field.endsWith('_url')
            ? [...URL_SAMPLES, ...JSON_SAMPLES]
            : [...TEXT_SAMPLES, ...JSON_SAMPLES];
        for (const sample of samples) {
          const refusal = serverRefusal(route, field, sample);
          const inDocument = documented(schema, sample);
          if (inDocument === (refusal !== null))
            mismatches.push(
              `${route.operationId} ${field}=${JSON.stringify(sample).slice(0, 50)}: document ${inDocument ? 'accepts' : 'refuses'}, server ${refusal === null ? 'accepts' : `refuses (${refusal})`}`,
            );
        }
      }
    }
    expect(mismatches).toEqual([]);
  });
});
