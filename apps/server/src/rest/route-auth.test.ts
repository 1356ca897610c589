import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ServiceError } from '@svc/core';
import { startHarness, type Harness } from '../testing/harness.js';
import { sendError } from './errors.js';
import { checkSvcMode, registerRoute } from './pipeline.js';
import { defineRoute, defineUnauthenticatedRoute } from './route.js';

let h: Harness;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  h = await startHarness();
  app = Fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer;
    done(null, undefined);
  });
  app.addHook('onRequest', async (request) => checkSvcMode(request.headers['svc-mode']));
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  const deps = { services: h.services, config: { validateResponses: false } as never };
  registerRoute(
    app,
    defineUnauthenticatedRoute({
      operationId: 'echoSigned',
      summary: 'test: a route a provider signature authenticates',
      method: 'POST',
      path: '/receive/:token',
      auth: 'source_signature',
      rateClass: 'none',
      responses: { 200: null, 401: null },
      async handler(request) {
        if (request.headers['x-signature'] !== 'good') throw new ServiceError('unauthorized', 'bad signature');
        return {
          status: 200,
          raw: Buffer.concat([Buffer.from(`${request.params['token']}:${request.url}:`), request.rawBody]),
          contentType: 'text/plain',
        };
      },
    }),
    deps,
  );
  registerRoute(
    app,
    defineRoute({
      operationId: 'keyed',
      summary: 'test: a keyed route',
      method: 'GET',
      path: '/keyed',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: z.object({ team: z.string() }) },
      async handler({ ctx }) {
        return { status: 200, body: { team: ctx.actor.teamId } };
      },
    }),
    deps,
  );
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app.close();
  await h.close();
});

describe('route authentication kinds', () => {
  it('a signature route runs without a key, sees the exact bytes and URL, and still checks Svc-Mode first', async () => {
    const body = '{"b": 1,  "a":2}';
    const ok = await fetch(`${base}/receive/tok_1?x=1`, {
      method: 'POST',
      headers: { 'x-signature': 'good', 'content-type': 'application/json' },
      body,
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe(`tok_1:/receive/tok_1?x=1:${body}`);
    const refused = await fetch(`${base}/receive/tok_1`, { method: 'POST', body });
    expect(refused.status).toBe(401);
    const mode = await fetch(`${base}/receive/tok_1`, {
      method: 'POST',
      headers: { 'x-signature': 'good', 'svc-mode': 'test' },
      body,
    });
    expect(mode.status).toBe(422);
    expect(((await mode.json()) as { error: { code: string } }).error.code).toBe('unsupported_mode');
  });

  it('a secret-key route refuses a request without a key and serves one with it', async () => {
    expect((await fetch(`${base}/keyed`)).status).toBe(401);
    const ok = await fetch(`${base}/keyed`, { headers: { authorization: `Bearer ${h.team.key}` } });
    expect(await ok.json()).toEqual({ team: h.team.teamId });
  });

  it('admission and source requests have buckets of their own', async () => {
    const team = await h.newTeam('buckets');
    for (let i = 0; i < 200; i += 1) await h.services.rateLimits.takeFor(team.teamId, 'admission');
    await expect(h.services.rateLimits.takeFor(team.teamId, 'admission')).rejects.toMatchObject({
      code: 'rate_limited',
    });
    // Reads are untouched by admissions.
    await h.services.rateLimits.takeFor(team.teamId, 'read');
    for (let i = 0; i < 100; i += 1) await h.services.rateLimits.takeFor('wds_source', 'source');
    await expect(h.services.rateLimits.takeFor('wds_source', 'source')).rejects.toMatchObject({
      code: 'rate_limited',
    });
  });
});
