import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient } from '../graphql/test-client.js';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ consoleUrl: 'https://console.example.com' });
});
afterAll(async () => {
  await h.close();
});

const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

describe('POST /tenants/{id}/portal_sessions and friends (extension routes, docs/portal.md)', () => {
  it('create a session with a one-time link on the console, list it and revoke it', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'portal-rest', name: 'Portal REST' });
    const key = uniqueKey();
    const body = {
      expires_in_seconds: 7200,
      capabilities: 'manage_endpoints',
      branding: { display_name: 'Acme', accent_color: '#AA0000', logo_url: 'https://cdn.example.com/logo.png' },
      spending_cap_usd: '2.5',
    };
    const created = await h.request('POST', `/tenants/${tenant.json.id}/portal_sessions`, {
      idempotencyKey: key,
      body,
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      tenant_id: tenant.json.id,
      capabilities: 'manage_endpoints',
      event_types: null,
      branding: { display_name: 'Acme', accent_color: '#aa0000', logo_url: 'https://cdn.example.com/logo.png' },
      spending_cap_usd: '2.5',
      spent_usd: '0',
      status: 'active',
      opened_at: null,
      expires_at: '2026-11-02T12:00:00.000Z',
    });
    expect(created.json.url).toMatch(/^https:\/\/console\.example\.com\/portal\/open\?token=svc_pl_[A-Za-z0-9_-]{43}$/);
    // An idempotent replay answers the same session without its one-time link.
    const replayed = await h.request('POST', `/tenants/${tenant.json.id}/portal_sessions`, {
      idempotencyKey: key,
      body,
    });
    expect(replayed.json).toMatchObject({ id: created.json.id, url: null });

    // The link opens once (GraphQL, as the console's open route does); the session token is no key for REST.
    const gql = graphqlClient(h);
    const opened = await gql(
      `mutation($t: String!) { openPortalSession(linkToken: $t) { token } }`,
      {
        t: tokenOf(created.json.url),
      },
      { key: null },
    );
    const sessionToken = opened.body.data.openPortalSession.token as string;
    expect(sessionToken).toMatch(/^svc_ps_/);
    const again = await gql(
      `mutation($t: String!) { openPortalSession(linkToken: $t) { token } }`,
      {
        t: tokenOf(created.json.url),
      },
      { key: null },
    );
    expect(again.body.errors[0].extensions.code).toBe('unauthorized');
    const asKey = await h.request('GET', '/tenants', { key: sessionToken });
    expect(asKey.status).toBe(401);

    const listed = await h.request('GET', `/tenants/${tenant.json.id}/portal_sessions`);
    expect(listed.json.data).toHaveLength(1);
    expect(listed.json.data[0]).toMatchObject({ id: created.json.id, opened_at: '2026-11-02T10:00:00.000Z' });
    expect(JSON.stringify(listed.json)).not.toMatch(/svc_p[ls]_/);

    const revoked = await post(h, `/tenants/${tenant.json.id}/portal_sessions/${created.json.id}/revoke`, {});
    expect(revoked.json).toMatchObject({ status: 'revoked', revoked_at: '2026-11-02T10:00:00.000Z' });
    const after = await gql(`{ portalContext { tenantName } }`, {}, { key: sessionToken });
    expect(after.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('refuses bad input with 422 and a deleted tenant with 409', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'portal-bad', name: 'Bad' });
    const path = `/tenants/${tenant.json.id}/portal_sessions`;
    for (const [body, field] of [
      [{ expires_in_seconds: 604_801 }, 'expires_in_seconds'],
      [{ expires_in_seconds: 59 }, 'expires_in_seconds'],
      [{ capabilities: 'admin' }, 'capabilities'],
      [{ branding: { logo_url: 'javascript:alert(1)' } }, 'branding.logo_url'],
      [{ branding: { accent_color: '#12345' } }, 'branding.accent_color'],
      [{ spending_cap_usd: '-1' }, 'spending_cap_usd'],
    ] as const) {
      const refused = await post(h, path, body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.json.error.field, JSON.stringify(body)).toBe(field);
    }
    const unknownType = await post(h, path, { event_types: ['no.such.type'] });
    expect(unknownType.json.error).toMatchObject({ code: 'invalid_event_type', field: 'event_types' });
    const current = await h.request('GET', `/tenants/${tenant.json.id}`);
    await h.request('DELETE', `/tenants/${tenant.json.id}`, { ifMatch: current.headers.get('etag')! });
    const deleted = await post(h, path, {});
    expect(deleted.status).toBe(409);
    expect(deleted.json.error.code).toBe('invalid_state');
  });

  it('give each portal session a bucket of its own: a busy one is refused while another of the team goes on', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'portal-rate', name: 'Rate' });
    const gql = graphqlClient(h);
    const openSession = async () => {
      const created = await post(h, `/tenants/${tenant.json.id}/portal_sessions`, {});
      const opened = await gql(
        `mutation($t: String!) { openPortalSession(linkToken: $t) { token } }`,
        { t: tokenOf(created.json.url) },
        { key: null },
      );
      return opened.body.data.openPortalSession.token as string;
    };
    const busy = await openSession();
    const quiet = await openSession();
    const codes: (string | undefined)[] = [];
    for (let i = 0; i < 51; i += 1) {
      const answer = await gql(`{ portalContext { tenantName } }`, {}, { key: busy });
      codes.push(answer.body.errors?.[0]?.extensions?.code);
    }
    expect(codes.slice(0, 50)).toEqual(Array.from({ length: 50 }, () => undefined));
    expect(codes[50]).toBe('rate_limited');
    const other = await gql(`{ portalContext { tenantName } }`, {}, { key: quiet });
    expect(other.body.data.portalContext.tenantName).toBe('Rate');
  });

  it('create an endpoint once per idempotency key, showing the secret again to the retry', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'portal-once', name: 'Once' });
    const gql = graphqlClient(h);
    const created = await post(h, `/tenants/${tenant.json.id}/portal_sessions`, { capabilities: 'manage_endpoints' });
    const opened = await gql(
      `mutation($t: String!) { openPortalSession(linkToken: $t) { token } }`,
      { t: tokenOf(created.json.url) },
      { key: null },
    );
    const token = opened.body.data.openPortalSession.token as string;
    const create = `mutation($key: String) {
      portalCreateEndpoint(input: { url: "https://once.example.com/hook" }, idempotencyKey: $key) {
        endpoint { id } signingSecret } }`;
    const first = await gql(create, { key: 'portal-once-1' }, { key: token });
    const retry = await gql(create, { key: 'portal-once-1' }, { key: token });
    expect(retry.body.data.portalCreateEndpoint).toEqual(first.body.data.portalCreateEndpoint);
    expect(first.body.data.portalCreateEndpoint.signingSecret).toMatch(/^whsec_/);
    const list = await gql(`{ portalEndpoints { nodes { id } } }`, {}, { key: token });
    expect(list.body.data.portalEndpoints.nodes).toHaveLength(1);
  });
});

describe('the one-time link is used only when opened, never by reading it (docs/portal.md)', () => {
  it('portalLink shows the page as often as asked and uses nothing; openPortalSession uses it once', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'portal-preview', name: 'Preview' });
    const created = await post(h, `/tenants/${tenant.json.id}/portal_sessions`, {
      branding: { display_name: 'Globex Payments' },
    });
    const gql = graphqlClient(h);
    const preview = `query($t: String!) { portalLink(linkToken: $t) { displayName frameOrigins } }`;
    const t = tokenOf(created.json.url);
    // A link scanner, then the tenant's browser, then a reload: the page is shown each time and nothing is opened.
    for (let i = 0; i < 3; i += 1) {
      const shown = await gql(preview, { t }, { key: null });
      expect(shown.body).toEqual({ data: { portalLink: { displayName: 'Globex Payments', frameOrigins: [] } } });
    }
    const listed = await h.request('GET', `/tenants/${tenant.json.id}/portal_sessions`);
    expect(listed.json.data[0]).toMatchObject({ opened_at: null, status: 'active' });
    // The button opens it; after that the page says the link is used, like a second opening.
    const opened = await gql(
      `mutation($t: String!) { openPortalSession(linkToken: $t) { token } }`,
      { t },
      { key: null },
    );
    expect(opened.body.data.openPortalSession.token).toMatch(/^svc_ps_/);
    const after = await gql(preview, { t }, { key: null });
    expect(after.body.errors[0].extensions.code).toBe('unauthorized');
    const forged = await gql(preview, { t: `svc_pl_${'A'.repeat(43)}` }, { key: null });
    expect(forged.body.errors[0].extensions.code).toBe('unauthorized');
  });
});
