import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRICT_URL_VECTORS, STRICT_VECTOR_POLICY } from '@svc/egress/src/url-vectors.js';
import { post, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let tenantId: string;
beforeAll(async () => {
  h = await startHarness({
    strictUrls: true,
    serviceHosts: [...STRICT_VECTOR_POLICY.serviceHosts],
    limits: { max_endpoints_per_tenant: 1000, max_endpoints: 1000 },
  });
  tenantId = (await post(h, '/tenants', { external_id: 'urls', name: 'URLs' })).json.id;
});
afterAll(async () => {
  await h.close();
});

describe('endpoint URLs through REST (production rules)', () => {
  it(`answers every one of the ${STRICT_URL_VECTORS.length} URL vectors as the policy table says, on create and on PATCH`, async () => {
    expect(STRICT_URL_VECTORS.length).toBeGreaterThanOrEqual(60);
    const base = await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://base.example.com/' });
    let etag = base.headers.get('etag')!;
    for (const [url, verdict] of STRICT_URL_VECTORS) {
      h.clock.advance(1000);
      const created = await post(h, '/endpoints', { tenant_id: tenantId, url });
      const patched = await h.request('PATCH', `/endpoints/${base.json.id}`, {
        ifMatch: etag,
        body: { url, authorization: null, headers: {} },
      });
      for (const [operation, response] of [
        ['create', created],
        ['patch', patched],
      ] as const) {
        if (verdict === 'ok') {
          expect(response.status, `${operation} ${url}`).toBe(operation === 'create' ? 201 : 200);
          expect(response.json.url, `${operation} keeps ${url} exactly`).toBe(url);
        } else {
          expect(response.status, `${operation} ${url}`).toBe(422);
          expect(response.json.error, `${operation} ${url}`).toMatchObject({ code: verdict, field: 'url' });
          // The URL (whose query may hold a secret) is never echoed back in the error.
          if (url.length > 12) expect(response.text.includes(url), `${operation} ${url} not echoed`).toBe(false);
        }
      }
      if (patched.status === 200) etag = patched.headers.get('etag')!;
    }
  }, 120_000);
});
