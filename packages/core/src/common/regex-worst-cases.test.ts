// Every regular expression of the core that a caller's input reaches, run on its worst case at the longest length
// the input can have (a field's own bound where the schema checks it first, else the whole 1 MiB body or a 16 KiB
// header). A regression guard against catastrophic backtracking, not a benchmark: the bounds are generous (a linear
// pattern takes well under a millisecond at these lengths; an exponential one takes hours).
import { describe, expect, it } from 'vitest';
import { ServiceError } from './errors.js';
import { decodeCursor, parseLimit } from './paging.js';
import { requireIfMatch } from './etag.js';
import { redactRequestUrl } from './log.js';
import { parseInput } from './validation.js';
import { decodePosition } from './window.js';
import { validateIdempotencyKey } from '../idempotency/idempotency.service.js';
import { CreateSourceInput, ListSourcesQuery } from '../sources/source.inputs.js';
import { CreateEventTypeInput } from '../event-types/event-type.inputs.js';
import { CreateEndpointInput } from '../endpoints/endpoint.inputs.js';
import { CreateTenantInput } from '../tenants/tenant.inputs.js';
import { CreateMessageInput, ListMessagesQuery } from '../messages/message.inputs.js';
import { acceptBody, capturedBody, normalizeContentType } from '../messages/message-body.js';
import { ListDeliveriesQuery } from '../deliveries/delivery.inputs.js';
import { CreateReplayInput } from '../deliveries/replay.inputs.js';
import { UsageQuery } from '../billing/usage.inputs.js';
import { AnalyticsQuery } from '../analytics/analytics.inputs.js';
import { ListOperationalEventsQuery } from '../events/operational-event.inputs.js';
import { ListPlatformEventsQuery, CreateSubscriptionInput } from '../subscriptions/subscription.inputs.js';
import { FLAG_KEY } from '../feature-flags/feature-flag.inputs.js';
import { isConsoleSessionToken, sessionTokenOf } from '../sessions/console-session.service.js';
import { isWellFormedKey } from '../teams/keys.js';
import { parseVerification, VERIFIERS, verifierFor } from '../sources/verifiers/index.js';
import { inbound, NOW } from '../sources/verifiers/verifier-test-support.js';
import { isWellFormedId } from './ids.js';

/** The largest request body the API reads, and about the largest header line Node accepts. */
const BODY_MAX = 1_048_576;
const HEADER_MAX = 16_000;
const SHORT_BOUND_MS = 200;
const LONG_BOUND_MS = 1_000;

/** The fastest of three runs, so a busy machine does not fail a linear pattern. */
function fastestRun(run: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    try {
      run();
    } catch (error) {
      // Refusals are the expected answer to most worst cases; only their speed matters here.
      if (!(error instanceof ServiceError)) throw error;
    }
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

function expectQuick(run: () => unknown, boundMs: number): void {
  expect(fastestRun(run)).toBeLessThan(boundMs);
}

const repeat = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

/** Shapes that defeat most patterns: long runs of what a quantifier accepts, ending in what nothing accepts. */
function worstCases(alphabet: readonly string[], length: number): string[] {
  const cases: string[] = [];
  for (const unit of alphabet) {
    cases.push(repeat(unit, length - 1) + '\u0000');
    cases.push(repeat(unit, length - 1) + '!');
    cases.push(repeat(unit, length));
  }
  return cases;
}

describe('event_type_path (a JSON Pointer, also the OpenAPI pattern)', () => {
  const source = (path: string) => ({
    tenant_id: `wdt_${'0'.repeat(26)}`,
    name: 'x',
    verification: {},
    event_type_path: path,
  });
  const attacks = [
    ...worstCases(['/', '/~', '/~0', '/a', '~', '/~1/'], 512),
    ...worstCases(['/', '/~', '/a'], BODY_MAX),
  ];

  it.each(attacks.map((attack) => [attack.slice(0, 12), attack.length, attack] as const))(
    '%j... (%i characters) is refused or accepted at once',
    (_head, length, attack) => {
      expectQuick(() => parseInput(CreateSourceInput, source(attack)), length > 512 ? LONG_BOUND_MS : SHORT_BOUND_MS);
    },
  );

  it('still accepts pointers and refuses what is not one', () => {
    for (const good of ['', '/', '/type', '/a~1b/~0c', '//', '/~01'])
      expect(parseInput(CreateSourceInput, source(good)).event_type_path).toBe(good);
    for (const bad of ['type', '/~', '/a~2', '/~/~', '/'.repeat(30) + '~'])
      expect(() => parseInput(CreateSourceInput, source(bad))).toThrow(/JSON Pointer/);
  });
});

describe('patterns of fields and query parameters', () => {
  const cases: [string, readonly string[], (text: string) => unknown][] = [
    ['event type name', ['a.', 'a', '.a', 'a_'], (name) => parseInput(CreateEventTypeInput, { name })],
    [
      'endpoint event pattern',
      ['a.', 'a', 'a.*', '*'],
      (pattern) => parseInput(CreateEndpointInput, { tenant_id: 'wdt_x', url: 'https://a.example', events: [pattern] }),
    ],
    [
      'endpoint header name',
      ['a', '!', '-'],
      (name) =>
        parseInput(CreateEndpointInput, { tenant_id: 'wdt_x', url: 'https://a.example', headers: { [name]: 'v' } }),
    ],
    ['tenant external_id', ['a', ':', '.'], (external_id) => parseInput(CreateTenantInput, { external_id, name: 'x' })],
    ['ID filters', ['a', 'a_', '_0', 'wdt_0'], (tenant_id) => parseInput(ListSourcesQuery, { tenant_id })],
    ['ID filters of messages', ['a', 'a_'], (source_id) => parseInput(ListMessagesQuery, { source_id })],
    ['ID filters of deliveries', ['a', 'a_'], (endpoint_id) => parseInput(ListDeliveriesQuery, { endpoint_id })],
    ['ID filters of events', ['a', 'a_'], (resource_id) => parseInput(ListOperationalEventsQuery, { resource_id })],
    [
      'RFC 3339 timestamps',
      ['2', '2026-01-01T00:00:00.', '0', '2026-01-01T00:00:00Z'],
      (deliver_at) => parseInput(CreateMessageInput, { tenant_id: 'wdt_x', event_type: 'a', deliver_at }),
    ],
    ['analytics window', ['2', '0'], (created_after) => parseInput(AnalyticsQuery, { created_after })],
    ['USD amounts', ['1', '1.', '.1'], (max_cost_usd) => parseInput(CreateReplayInput, { max_cost_usd })],
    ['billing month', ['2', '2026-', '-0'], (month) => parseInput(UsageQuery, { month })],
    [
      'platform environment filter',
      ['ffe_', 'a', '0'],
      (environment_id) => parseInput(ListPlatformEventsQuery, { environment_id }),
    ],
    [
      'environment IDs',
      ['ffe_', '0'],
      (id) => parseInput(CreateSubscriptionInput, { url: 'https://a.example', events: [], environment_ids: [id] }),
    ],
    ['flag keys', ['a', '.', '-'], (key) => FLAG_KEY.test(key)],
    ['well-formed IDs', ['a', 'a_', '_', 'wdt_0'], (id) => isWellFormedId(id)],
  ];

  it.each(cases.map(([name, alphabet, run]) => [name, alphabet, run] as const))(
    '%s: worst cases of a whole body',
    (_name, alphabet, run) => {
      for (const attack of worstCases(alphabet, BODY_MAX)) expectQuick(() => run(attack), LONG_BOUND_MS);
    },
  );
});

describe('patterns of headers, cursors and bodies', () => {
  it('Idempotency-Key, If-Match, Authorization and console session tokens', () => {
    for (const attack of worstCases([' ', 'a', '"', '"a', 'Bearer ', 'svc_cs_'], HEADER_MAX)) {
      expectQuick(() => validateIdempotencyKey(attack), SHORT_BOUND_MS);
      expectQuick(() => requireIfMatch(attack), SHORT_BOUND_MS);
      expectQuick(() => requireIfMatch(`"${attack}"`), SHORT_BOUND_MS);
      expectQuick(() => sessionTokenOf(`Bearer ${attack}`), SHORT_BOUND_MS);
      expectQuick(() => isConsoleSessionToken(attack), SHORT_BOUND_MS);
      expectQuick(() => isWellFormedKey(`svc_sk_${attack}`), SHORT_BOUND_MS);
    }
  });

  it('cursors, limits and page positions', () => {
    const scope = { teamId: 'team_x', list: 'tenants', filters: {} };
    for (const attack of worstCases(['a', '-', '0', '0:', '0:wdt_'], HEADER_MAX)) {
      expectQuick(() => decodeCursor(scope, attack), SHORT_BOUND_MS);
      expectQuick(() => parseLimit(attack), SHORT_BOUND_MS);
      expectQuick(() => decodePosition(attack, 'wdm_'), SHORT_BOUND_MS);
    }
  });

  it('request URLs in logs', () => {
    for (const attack of worstCases(['/receive', 'receive/', '/', '?', '/receive/a?'], HEADER_MAX))
      expectQuick(() => redactRequestUrl(attack), SHORT_BOUND_MS);
  });

  it('message bodies: Base64, content types and captured bodies', () => {
    for (const attack of worstCases(['A', 'AAA=', 'AA=', '+/'], BODY_MAX))
      expectQuick(
        () =>
          acceptBody({
            tenant_id: 'wdt_x',
            event_type: 'a',
            body_base64: attack,
            content_type: 'text/plain',
            metadata: {},
          }),
        LONG_BOUND_MS,
      );
    for (const attack of worstCases(['charset=', ' ;', '"utf-8"', 'text/plain;'], HEADER_MAX)) {
      expectQuick(() => normalizeContentType(`text/plain; ${attack}`), SHORT_BOUND_MS);
      expectQuick(() => capturedBody(Buffer.from('{}'), `application/json; ${attack}`), SHORT_BOUND_MS);
    }
  });
});

describe('source verification settings and inbound security headers', () => {
  it('hmac settings: header names, prefixes and the signed-content template', () => {
    for (const attack of worstCases(['a', '{', '{a', '{body}', '!'], BODY_MAX)) {
      expectQuick(() => parseVerification({ kind: 'hmac', header: attack }), LONG_BOUND_MS);
      expectQuick(() => parseVerification({ kind: 'hmac', header: 'x-sig', prefix: attack }), LONG_BOUND_MS);
      expectQuick(() => parseVerification({ kind: 'hmac', header: 'x-sig', signed_content: attack }), LONG_BOUND_MS);
    }
  });

  it.each(Object.keys(VERIFIERS))('%s: secrets an operator brings, a whole body long', (kind) => {
    for (const attack of worstCases(['A', 'AAA=', 'whsec_', 'a ', '-_'], BODY_MAX))
      expectQuick(() => parseVerification({ kind, secret: attack }), LONG_BOUND_MS);
  });

  const headerNames = [
    'authorization',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
    'stripe-signature',
    'x-hub-signature-256',
    'x-github-delivery',
    'x-shopify-hmac-sha256',
    'x-shopify-webhook-id',
    'x-shopify-event-id',
    'x-slack-signature',
    'x-slack-request-timestamp',
    'x-twilio-signature',
    'x-sig',
    'x-ts',
  ];
  const secrets: Record<string, string> = {
    standard_webhooks: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    payments: 'whsec_test_secret_0123456789',
    bearer: 'a-bearer-token-of-the-sender',
  };

  it.each(Object.keys(VERIFIERS))('%s: every security header at its worst', (kind) => {
    const verifier = verifierFor(kind);
    const settings =
      kind === 'hmac'
        ? { header: 'x-sig', prefix: 'sha256=', timestamp_header: 'x-ts', signed_content: '{timestamp}.{body}' }
        : {};
    const secret = secrets[kind] ?? 'a-secret-of-the-provider-0123456789';
    const units = ['a', 'A', '0', ' ', '=', 'v1=', 'v1,', 't=1,', 'sha256=', 'Bearer ', ',', 'aa'];
    for (const attack of worstCases(units, HEADER_MAX)) {
      const request = inbound(
        '{"id":"evt_1","type":"a"}',
        headerNames.map((name) => [name, attack] as const),
      );
      expectQuick(() => verifier.verify(request, settings, [secret], NOW), SHORT_BOUND_MS);
    }
  });
});
