import { describe, expect, it } from 'vitest';
import { SPAN, type ReadableSpan } from '@svc/core';
import { post } from '../../../server/src/testing/harness.js';
import { useTracedStack } from './traced-stack.testing.js';

// The sibling of apps/server/src/rest/secrets-in-logs.test.ts for traces: every span a flow full of secrets
// produced, from the HTTP requests through admission to the attempts, as an OTLP exporter would send it.

const traced = useTracedStack();

/** Everything of a span an exporter sends: name, attributes, events, links, status, resource and scope. */
function exported(span: ReadableSpan): string {
  return JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
    links: span.links.map((link) => link.attributes ?? {}),
    status: span.status,
    resource: span.resource.attributes,
    scope: span.instrumentationScope,
  });
}

describe('spans', () => {
  it('never hold keys, signing secrets, header values, authorization values, URL paths or queries, or bodies', async () => {
    const h = traced.stack.h;
    const tenant = await post(h, '/tenants', { external_id: 'spans', name: 'Spans' });
    const endpoint = await post(h, '/endpoints', {
      tenant_id: tenant.json.id,
      url: `${traced.stack.base}/spans/path-token-secret-1?token=query-secret-2`,
      headers: { 'X-Api-Key': 'header-secret-3' },
      authorization: 'Bearer authorization-secret-4',
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    traced.stack.script.set('/spans-failing?token=query-secret-5', [500]);
    const failing = await post(h, '/endpoints', {
      tenant_id: tenant.json.id,
      url: `${traced.stack.base}/spans-failing?token=query-secret-5`,
      retry_delays_seconds: [60],
    });
    expect(failing.status, failing.text).toBe(201);

    const published = await h.request('POST', '/messages', {
      headers: { 'x-caller-note': 'header-secret-6', traceparent: `00-${'a1'.repeat(16)}-${'b2'.repeat(8)}-01` },
      idempotencyKey: 'idempotency-secret-7',
      body: {
        tenant_id: tenant.json.id,
        event_type: 'order.created',
        payload: { card: 'payload-secret-8' },
        metadata: { note: 'metadata-secret-9' },
      },
    });
    expect(published.status, published.text).toBe(202);

    // A source capture: its receive URL's last segment is a secret, and so is its bearer token.
    const source = await post(h, '/sources', {
      tenant_id: tenant.json.id,
      name: 'Spans source',
      verification: { kind: 'bearer' },
      event_type: 'order.created',
    });
    expect(source.status, source.text).toBe(201);
    const receivePath = new URL(source.json.receive_url as string).pathname;
    const captured = await fetch(`${h.rootUrl}${receivePath}?sig=query-secret-10`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${source.json.secret}` },
      body: '{"type":"order.created","captured":"payload-secret-11"}',
    });
    expect(captured.status, await captured.text()).toBe(200);

    // Refusals and GraphQL requests are traced too.
    await h.request('GET', '/tenants?external_id=query-secret-12');
    await h.request('GET', '/tenants', { key: 'svc_sk_' + 'z'.repeat(43) });
    await fetch(`${h.rootUrl}/graphql?token=query-secret-13`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.team.key}` },
      body: JSON.stringify({
        query: `mutation { createEndpoint(input: { tenantId: "${tenant.json.id}", url: "https://a.example.com/path-token-secret-14?token=query-secret-15", authorization: "Bearer authorization-secret-16" }) { signingSecret } }`,
      }),
    });

    // Both messages reach both endpoints: two succeeded and two failing attempts, each settled.
    await traced.stack.until('the four settled jobs', () =>
      traced.exporter.getFinishedSpans().filter((span) => span.name === SPAN.job).length >= 4 ? true : undefined,
    );
    const spans = traced.exporter.getFinishedSpans();
    const attempts = spans.filter((span) => span.name === SPAN.attempt);
    expect(attempts.map((span) => span.attributes['svc.attempt.outcome']).sort()).toEqual([
      'http_500',
      'http_500',
      'succeeded',
      'succeeded',
    ]);
    expect(spans.some((span) => span.name === 'POST /v1/receive/:token')).toBe(true);
    expect(spans.some((span) => span.name === 'POST /graphql')).toBe(true);

    const delivered = traced.stack.received.find((r) => r.path.startsWith('/spans/'))!;
    const text = spans.map(exported).join('\n');
    for (const secret of [
      h.team.key,
      'svc_sk_' + 'z'.repeat(43),
      endpoint.json.signing_secret,
      failing.json.signing_secret,
      source.json.secret,
      receivePath.split('/').at(-1)!,
      String(delivered.headers['webhook-signature']),
      'path-token-secret-1',
      'query-secret-2',
      'header-secret-3',
      'authorization-secret-4',
      'query-secret-5',
      'header-secret-6',
      'idempotency-secret-7',
      'payload-secret-8',
      'metadata-secret-9',
      'query-secret-10',
      'payload-secret-11',
      'query-secret-12',
      'query-secret-13',
      'path-token-secret-14',
      'query-secret-15',
      'authorization-secret-16',
    ]) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text.includes(secret), `spans hold ${secret}`).toBe(false);
    }
  });
});
