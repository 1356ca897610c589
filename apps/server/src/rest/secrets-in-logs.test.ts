import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, type Harness } from '../testing/harness.js';

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
    const text = h.logs.join('\n');
    expect(h.logs.length).toBeGreaterThan(0);
    for (const secret of [
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
});
