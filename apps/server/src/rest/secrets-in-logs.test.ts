import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, type Harness } from '../testing/harness.js';

interface LogLine {
  level: number;
  msg?: string;
  err?: { type?: string; message?: string; code?: string; query?: string };
  req?: { url?: string };
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ captureLogs: true });
});
afterAll(async () => {
  await h.close();
});

describe('logs', () => {
  it('never hold keys, signing secrets, header values, authorization values or URL queries', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'logs', name: 'Logs' });
    const created = await post(h, '/endpoints', {
      tenant_id: tenant.json.id,
      url: 'https://logs.example.com/in?token=query-secret-1',
      headers: { 'X-Api-Key': 'header-secret-2' },
      authorization: 'Bearer authorization-secret-3',
    });
    expect(created.status).toBe(201);
    const etag = created.headers.get('etag')!;
    // Failures and refusals are logged too; none of them may carry the values.
    await h.request('PATCH', `/endpoints/${created.json.id}`, {
      ifMatch: etag,
      body: {
        url: 'https://10.0.0.1/x?token=query-secret-4',
        authorization: 'Bearer authorization-secret-5',
        headers: {},
      },
    });
    await h.request('PATCH', `/endpoints/${created.json.id}`, {
      ifMatch: '"wd:stale:1"',
      body: { authorization: 'Bearer authorization-secret-6' },
    });
    const rotated = await post(h, `/endpoints/${created.json.id}/rotate_secret`, {}, { ifMatch: etag });
    await h.request('GET', '/tenants', { key: 'svc_sk_' + 'z'.repeat(43) });
    await fetch(`${h.rootUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.team.key}` },
      body: JSON.stringify({
        query:
          'mutation { createEndpoint(input: { tenantId: "x", url: "https://a.example.com/?token=query-secret-7", authorization: "Bearer authorization-secret-8" }) { signingSecret } }',
      }),
    });
    const environment = await post(h, '/platform/feature_flags/environments', { name: 'logs' });
    const subscription = await post(h, '/platform/event_subscriptions', {
      url: 'https://chat.example.com/api/webhooks/1/chat-token-9?wait=true',
      events: ['feature_flags.*'],
      environment_ids: [environment.json.id],
      format: 'chat_c',
    });
    expect(subscription.status).toBe(201);
    const rotatedSubscription = await post(
      h,
      `/platform/event_subscriptions/${subscription.json.id}/rotate_secret`,
      {},
    );
    expect(rotatedSubscription.json.secret).toMatch(/^whsec_/);
    const text = h.logs.join('\n');
    expect(h.logs.length).toBeGreaterThan(0);
    for (const secret of [
      subscription.json.secret,
      rotatedSubscription.json.secret,
      'chat-token-9',
      h.team.key,
      'svc_sk_' + 'z'.repeat(43),
      created.json.signing_secret,
      rotated.json.signing_secret,
      'query-secret-1',
      'header-secret-2',
      'authorization-secret-3',
      'query-secret-4',
      'authorization-secret-5',
      'authorization-secret-6',
      'query-secret-7',
      'authorization-secret-8',
    ]) {
      expect(text.includes(secret), `logs hold ${secret}`).toBe(false);
    }
  });

  it('keep database failures and 5xx answers with their cause but without bind parameters', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'logs-db', name: 'Logs DB' });
    // A forced failure inside the INSERT of an endpoint: TypeORM's error carries the statement's parameters.
    await h.services.db.query(`
      CREATE FUNCTION refuse_endpoint() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'forced failure for the log test'; END $$;
      CREATE TRIGGER refuse_endpoint BEFORE INSERT ON endpoints FOR EACH ROW EXECUTE FUNCTION refuse_endpoint();
    `);
    const before = h.logs.length;
    try {
      const failed = await post(h, '/endpoints', {
        tenant_id: tenant.json.id,
        url: 'https://logs.example.com/in?token=query-secret-9',
        description: 'payload-secret-10',
      });
      expect(failed.status).toBe(500);
      expect(failed.json.error).toEqual({ code: 'internal_error', message: 'internal error' });
      const graphql = await fetch(`${h.rootUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${h.team.key}` },
        body: JSON.stringify({
          query: `mutation { createEndpoint(input: { tenantId: "${tenant.json.id}", url: "https://a.example.com/?token=query-secret-11" }) { signingSecret } }`,
        }),
      });
      expect((await graphql.json()).errors[0].extensions.code).toBe('internal_error');
    } finally {
      await h.services.db.query('DROP TRIGGER refuse_endpoint ON endpoints; DROP FUNCTION refuse_endpoint()');
    }

    // A sealing failure is a 503 with a documented code, and logged with its cause.
    const created = await post(h, '/endpoints', {
      tenant_id: tenant.json.id,
      url: 'https://logs.example.com/ok',
      headers: { 'X-Api-Key': 'header-secret-12' },
    });
    await h.services.db.query(`UPDATE endpoints SET headers_sealed = decode('00', 'hex') WHERE id = $1`, [
      created.json.id,
    ]);
    const unsealable = await h.request('PATCH', `/endpoints/${created.json.id}`, {
      ifMatch: created.headers.get('etag')!,
      body: { headers: { 'X-Api-Key': 'header-secret-13' } },
    });
    expect(unsealable.status).toBe(503);

    // The receive token is the secret part of a source's receive URL.
    await h.request('POST', '/receive/receive-token-secret-14?sig=query-secret-15', { key: null, body: {} });

    const lines = h.logs.slice(before).map((line) => JSON.parse(line) as LogLine);
    const text = h.logs.join('\n');
    for (const secret of [
      'query-secret-9',
      'payload-secret-10',
      'query-secret-11',
      'header-secret-12',
      'header-secret-13',
      'receive-token-secret-14',
      'query-secret-15',
    ])
      expect(text.includes(secret), `logs hold ${secret}`).toBe(false);
    const failures = lines.filter((line) => line.level >= 50);
    expect(failures.map((line) => line.err?.message)).toEqual(
      expect.arrayContaining([
        'forced failure for the log test',
        'forced failure for the log test',
        'a sealed secret could not be opened',
      ]),
    );
    const dbFailure = failures.find((line) => line.err?.message === 'forced failure for the log test');
    expect(dbFailure?.err).toMatchObject({ type: 'QueryFailedError', code: 'P0001' });
    expect(dbFailure?.err?.query).toContain('INSERT INTO "endpoints"');
    expect(lines.some((line) => line.req?.url === '/v1/receive/[token]')).toBe(true);
  });
});
