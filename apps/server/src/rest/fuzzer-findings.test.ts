import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ID_PREFIXES } from '@svc/core';
import { startHarness, type ApiResponse, type Harness, type RequestOptions } from '../testing/harness.js';
import { exampleId } from './openapi-examples.js';
import { pathIdKinds } from './path-params.js';
import type { RouteSpec } from './route.js';

/** What an external fuzzer and hand probes found (issue 27, section 4), on every route it applies to. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** A request on the manual clock with time for the team's buckets to refill, so a sweep of every route fits. */
function send(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
  h.clock.advance(50);
  return h.request(method, path, options);
}

/** The route's path with well-formed IDs of the right kinds (unknown ones: these checks come before any lookup). */
function concretePath(route: RouteSpec): string {
  const kinds = pathIdKinds(route.path);
  return route.path.replace(/:([A-Za-z_]+)/g, (_, name: string) =>
    name === 'flag_key' ? 'a-flag' : exampleId(ID_PREFIXES[kinds[name]!]),
  );
}

const queryNames = (route: RouteSpec): string[] =>
  Object.keys((route.query as { shape?: Record<string, unknown> } | undefined)?.shape ?? {});

/** zod's own messages, which the API must never show (it names the field and says what it wants in its words). */
const VALIDATOR_DEFAULTS =
  /Too small|Too big|Invalid input|Invalid option|Invalid string|Invalid element|expected \w+ to/;

describe('undeclared methods', () => {
  it('answer 405 method_not_allowed with Allow on every known path, 404 on unknown paths', async () => {
    const served = new Map<string, Set<string>>();
    for (const route of h.built.routes) {
      const path = concretePath(route);
      served.set(
        path,
        new Set([...(served.get(path) ?? []), route.method, ...(route.method === 'GET' ? ['HEAD'] : [])]),
      );
    }
    for (const [path, methods] of served) {
      const other = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].find((method) => !methods.has(method))!;
      const answer = await send(other, path, other === 'GET' ? {} : { body: {} });
      expect(answer.status, `${other} ${path}`).toBe(405);
      expect(answer.headers.get('allow'), `${other} ${path}`).toBe([...methods].sort().join(', '));
      expect(answer.headers.get('request-id')).toBeTruthy();
      expect(answer.json.error).toEqual({
        code: 'method_not_allowed',
        message: 'this route does not take this method; the Allow header lists those it takes',
      });
    }
    // The fuzzer's example, and the paths outside /v1.
    const capabilities = await send('DELETE', '/capabilities');
    expect([capabilities.status, capabilities.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const graphql = await send('PUT', `${h.rootUrl}/graphql`, { body: {} });
    expect(graphql.status).toBe(405);
    expect(graphql.headers.get('allow')).toContain('POST');
    expect((await send('DELETE', `${h.rootUrl}/healthz`)).headers.get('allow')).toBe('GET, HEAD');
    // Unknown paths stay 404, whatever the method; the path is never echoed.
    for (const [method, path] of [
      ['DELETE', '/nope'],
      ['GET', `/tenants/${exampleId('wdt_')}/nope`],
      ['POST', `${h.rootUrl}/nope`],
    ] as const) {
      const answer = await send(method, path, method === 'GET' ? {} : { body: {} });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.json.error).toEqual({ code: 'not_found', message: 'no such route' });
    }
  });
});

describe('list parameters', () => {
  const lists = () => h.built.routes.filter((route) => queryNames(route).includes('limit'));

  it('refuse an empty limit like any other value that is not an integer from 1 to 200', async () => {
    expect(lists().length).toBeGreaterThan(10);
    const wrong: string[] = [];
    for (const route of lists()) {
      for (const limit of ['', 'abc', '0', '201']) {
        const answer = await send('GET', `${concretePath(route)}?limit=${limit}`);
        const error = answer.json?.error;
        if (
          answer.status !== 422 ||
          error.field !== 'limit' ||
          error.message !== 'limit must be an integer from 1 to 200'
        )
          wrong.push(`${route.operationId} limit=${limit}: ${answer.status} ${answer.text}`);
      }
      const good = await send('GET', `${concretePath(route)}?limit=200`);
      if (good.status === 422) wrong.push(`${route.operationId} limit=200: ${good.text}`);
    }
    expect(wrong).toEqual([]);
  });

  it("are refused in the API's words, never the validator's", async () => {
    const empty = await send('GET', '/messages?event_type=');
    expect(empty.json.error).toEqual({
      code: 'invalid_field',
      field: 'event_type',
      message: 'event_type: must not be empty',
    });
    for (const route of lists())
      for (const name of queryNames(route))
        for (const value of ['', 'x'.repeat(300), '+', 'wdt_', '-1']) {
          const answer = await send('GET', `${concretePath(route)}?${name}=${encodeURIComponent(value)}`);
          if (answer.status !== 422) continue;
          expect(answer.json.error.message, `${route.operationId} ${name}=${value}`).not.toMatch(VALIDATOR_DEFAULTS);
        }
  });
});

describe('request bodies', () => {
  it("are refused in the API's words, never the validator's", async () => {
    const values: unknown[] = ['', 'x'.repeat(5_000), -1, 1.5, 10_000_000, [], [''], {}, { '': '' }, true];
    let refusals = 0;
    for (const route of h.built.routes.filter((candidate) => candidate.input !== undefined)) {
      const shape = (route.input as { shape?: Record<string, unknown> }).shape ?? {};
      for (const field of Object.keys(shape))
        for (const value of values) {
          const answer = await send(route.method, concretePath(route), {
            body: { [field]: value },
            ...(route.idempotent ? { idempotencyKey: `k-${refusals}-${Math.random()}` } : {}),
            ...(route.ifMatch ? { ifMatch: '"wd:x:1"' } : {}),
          });
          if (answer.status !== 422) continue;
          refusals += 1;
          expect(answer.json.error.message, `${route.operationId} ${field}=${JSON.stringify(value)}`).not.toMatch(
            VALIDATOR_DEFAULTS,
          );
        }
    }
    expect(refusals).toBeGreaterThan(500);
  });
});
