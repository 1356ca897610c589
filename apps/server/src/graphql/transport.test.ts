import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
const nodeEnv = process.env['NODE_ENV'];
beforeAll(async () => {
  // As under `npm start` (no NODE_ENV), where Apollo's defaults would add stack traces and a CDN landing page.
  delete process.env['NODE_ENV'];
  h = await startHarness();
  gql = graphqlClient(h);
});
afterAll(async () => {
  if (nodeEnv !== undefined) process.env['NODE_ENV'] = nodeEnv;
  await h.close();
});

describe('Svc-Mode on /graphql, as on REST', () => {
  it('answers test with 422 unsupported_mode and anything else with 422 invalid_field, before authentication', async () => {
    const test = await gql('{ viewer { teamId } }', {}, { key: null, headers: { 'svc-mode': 'test' } });
    expect(test.status).toBe(422);
    expect(test.body.errors).toEqual([
      { message: expect.not.stringContaining('Context creation failed'), extensions: { code: 'unsupported_mode' } },
    ]);
    const other = await gql('{ viewer { teamId } }', {}, { headers: { 'svc-mode': 'sandbox' } });
    expect(other.status).toBe(422);
    expect(other.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'Svc-Mode' });
    const live = await gql('{ viewer { teamId } }', {}, { headers: { 'svc-mode': 'live' } });
    expect(live.body.data.viewer.teamId).toBe(h.team.teamId);
  });
});

describe('GraphQL error responses', () => {
  it('carry no stack trace: not for a bad document, a refused request or an internal error', async () => {
    const unknownField = await gql('{ viewer { teamId shoeSize } }');
    expect(unknownField.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const unauthorized = await gql('{ viewer { teamId } }', {}, { key: 'svc_sk_wrong' });
    expect(unauthorized.body.errors[0].extensions.code).toBe('unauthorized');

    // Force an internal error: the tenants table disappears for a moment.
    await h.services.db.query('ALTER TABLE tenants RENAME TO tenants_away');
    let internal;
    try {
      internal = await gql('{ tenants(first: 1) { nodes { id } } }');
    } finally {
      await h.services.db.query('ALTER TABLE tenants_away RENAME TO tenants');
    }
    expect(internal.body.errors).toEqual([
      { message: 'internal error', path: ['tenants'], extensions: { code: 'internal_error' } },
    ]);

    for (const answer of [unknownField, unauthorized, internal]) {
      for (const error of answer.body.errors) expect(error.extensions).not.toHaveProperty('stacktrace');
      expect(JSON.stringify(answer.body)).not.toMatch(/\.ts:\d+|node_modules|at async/);
    }
  });
});

describe('GET /graphql in a browser', () => {
  it('serves a self-contained page on how to call the API, with the schema, loading nothing from elsewhere', async () => {
    const response = await fetch(`${h.rootUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain('POST /graphql');
    expect(html).toContain('Authorization: Bearer');
    expect(html).toContain('type Query {');
    expect(html).toContain('createEndpoint(');
    // Nothing fetched from another host: no scripts, styles, images or frames by URL, and links stay on the page.
    expect(html).not.toMatch(/<(script|img|iframe|link|embed|object)[^>]*\s(src|href|data)=/i);
    expect(html).not.toMatch(/@import|url\(/i);
    for (const [, href] of html.matchAll(/href="([^"]*)"/g)) expect(href).toMatch(/^(#|\/)/);
    expect(html).not.toMatch(/cdn|apollographql\.com|embeddable-sandbox/i);
  });
});
