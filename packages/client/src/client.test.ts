import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The client is tested against the real server and worker (the delivery stack: a Fastify server, a pg-boss worker
// and a loopback receiver over one test database), not against mocks of them.
import { startDeliveryStack, type DeliveryStack } from '../../../apps/worker/src/delivery/delivery.testing.js';
import { createClient, SvcApiError, verify, WebhookVerificationError, type Schema, type SvcClient } from './index.js';

interface Sent {
  method: string;
  path: string;
  idempotencyKey: string | null;
  status: number;
  at: number;
}

let stack: DeliveryStack;

/** A client over the real global fetch that notes every request it puts on the wire (retries included). */
function recordingClient(key: string, options: { retries?: number; maxRetryAfterSeconds?: number } = {}) {
  const sent: Sent[] = [];
  const client: SvcClient = createClient({
    baseUrl: stack.h.baseUrl,
    key,
    ...options,
    fetch: async (request) => {
      const response = await fetch(request);
      sent.push({
        method: request.method,
        path: new URL(request.url).pathname.replace(/^\/v1/, ''),
        idempotencyKey: request.headers.get('idempotency-key'),
        status: response.status,
        at: Date.now(),
      });
      return response;
    },
  });
  return { client, sent };
}

beforeAll(async () => {
  // The real clock: receivers check webhook-timestamp against theirs, and Retry-After is waited for in real time.
  // One config write per second (burst 40) lets a test reach 429 quickly.
  stack = await startDeliveryStack({ config_writes_per_second: 1 }, { realClock: true });
});
afterAll(async () => {
  await stack.close();
});

describe('the client against the running server', () => {
  let tenant: Schema<'Tenant'>;
  let tenantEtag: string;
  let secret: string;
  const published: string[] = [];

  it('creates a tenant, an event type and an endpoint, each POST with its own generated Idempotency-Key', async () => {
    const { client, sent } = recordingClient(stack.h.team.key);
    const created = await client.POST('/tenants', { body: { external_id: 'acme', name: 'Acme Inc' } });
    tenant = created.data;
    expect(tenant).toMatchObject({ external_id: 'acme', name: 'Acme Inc', status: 'active', version: '1' });
    expect(created.etag).toBe(`"wd:${tenant.id}:1"`);
    tenantEtag = created.etag!;

    const eventType = await client.POST('/event_types', { body: { name: 'invoice.paid' } });
    expect(eventType.data.name).toBe('invoice.paid');
    const made = await client.POST('/endpoints', {
      body: { tenant_id: tenant.id, url: `${stack.base}/client`, events: ['invoice.paid'] },
    });
    expect(made.data.signing_secret).toMatch(/^whsec_/);
    secret = made.data.signing_secret!;

    const keys = sent.map((request) => request.idempotencyKey);
    expect(sent.map((request) => `${request.method} ${request.path} ${request.status}`)).toEqual([
      'POST /tenants 201',
      'POST /event_types 201',
      'POST /endpoints 201',
    ]);
    expect(new Set(keys).size).toBe(3);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends the Idempotency-Key it is given, so a repeated call returns the first answer', async () => {
    const { client } = recordingClient(stack.h.team.key);
    const first = await client.POST('/tenants', {
      params: { header: { 'Idempotency-Key': 'client-test-beta' } },
      body: { external_id: 'beta', name: 'Beta' },
    });
    const again = await client.POST('/tenants', {
      params: { header: { 'Idempotency-Key': 'client-test-beta' } },
      body: { external_id: 'beta', name: 'Beta' },
    });
    expect(again.data.id).toBe(first.data.id);
    expect(again.response.headers.get('idempotency-replayed')).toBe('true');
  });

  it('publishes and pages through the messages with the async iterator, more than one page', async () => {
    const { client, sent } = recordingClient(stack.h.team.key);
    for (let i = 0; i < 5; i += 1) {
      const message = await client.POST('/messages', {
        body: { tenant_id: tenant.id, event_type: 'invoice.paid', payload: { invoice: i } },
      });
      expect(message.response.status).toBe(202);
      published.push(message.data.id);
    }
    const listed: string[] = [];
    for await (const message of client.list('/messages', { params: { query: { tenant_id: tenant.id, limit: 2 } } }))
      listed.push(message.id);
    expect(listed).toEqual(published);
    expect(sent.filter((request) => request.path === '/messages' && request.method === 'GET')).toHaveLength(3);
  });

  it('verifies a received delivery with verify, and refuses a tampered body or another secret', async () => {
    const deliveries = await stack.until('the five deliveries', () => {
      const got = stack.received.filter((request) => request.path === '/client');
      return got.length >= published.length ? got : undefined;
    });
    const verifiedIds = deliveries.map((delivery) => verify(delivery.headers, delivery.body, secret).id);
    expect(new Set(verifiedIds)).toEqual(new Set(published));

    const first = deliveries[0]!;
    const verified = verify(first.headers, first.body.toString('utf8'), secret);
    expect(Math.abs(verified.timestamp.getTime() - Date.now())).toBeLessThan(60_000);
    const tampered = Buffer.from(first.body.toString('utf8').replace(/\d/, '9'));
    expect(tampered.equals(first.body)).toBe(false);
    expect(() => verify(first.headers, tampered, secret)).toThrow(WebhookVerificationError);
    const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(() => verify(first.headers, first.body, other)).toThrow(WebhookVerificationError);
    const headers = new Headers(first.headers as Record<string, string>);
    expect(verify(headers, first.body, secret).id).toBe(verified.id);
  });

  it('changes a resource with If-Match from its ETag; a stale ETag is the typed 412 with the current ETag', async () => {
    const { client } = recordingClient(stack.h.team.key);
    const read = await client.GET('/tenants/{id}', { params: { path: { id: tenant.id } } });
    expect(read.etag).toBe(tenantEtag);
    const changed = await client.PATCH('/tenants/{id}', {
      params: { path: { id: tenant.id }, header: { 'If-Match': read.etag! } },
      body: { name: 'Acme Corp' },
    });
    expect(changed.data).toMatchObject({ name: 'Acme Corp', version: '2' });
    expect(changed.etag).toBe(`"wd:${tenant.id}:2"`);

    const stale = await client
      .PATCH('/tenants/{id}', {
        params: { path: { id: tenant.id }, header: { 'If-Match': read.etag! } },
        body: { name: 'Acme Again' },
      })
      .catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(SvcApiError);
    expect(stale).toMatchObject({ status: 412, code: 'revision_conflict', etag: changed.etag });
    expect((stale as SvcApiError).requestId).toEqual(expect.any(String));

    const unguarded = await client
      // @ts-expect-error The contract requires If-Match here, and so do the generated types.
      .PATCH('/tenants/{id}', { params: { path: { id: tenant.id } }, body: { name: 'Blind' } })
      .catch((error: unknown) => error);
    expect(unguarded).toMatchObject({ status: 428, code: 'precondition_required' });
  });

  it('raises typed errors with code, field and resource_id', async () => {
    const { client } = recordingClient(stack.h.team.key);
    const invalid = await client
      .POST('/tenants', { body: { external_id: 'not valid!', name: 'x' } })
      .catch((error: unknown) => error);
    expect(invalid).toMatchObject({ status: 422, code: 'invalid_field', field: 'external_id' });
    const taken = await client
      .POST('/tenants', { body: { external_id: 'acme', name: 'Another Acme' } })
      .catch((error: unknown) => error);
    expect(taken).toMatchObject({ status: 409, code: 'resource_in_use', resource_id: tenant.id });
    const missing = await client
      .GET('/tenants/{id}', { params: { path: { id: 'wdt_00000000000000000000000000' } } })
      .catch((error: unknown) => error);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('retries of 429 and 503', () => {
  /** Takes the team's config-write tokens until the bucket refuses (burst 40, one more each second). */
  async function drainConfigWrites(teamId: string): Promise<void> {
    for (let i = 0; i < 200; i += 1) {
      try {
        await stack.h.services.rateLimits.takeFor(teamId, 'config_write');
      } catch {
        return;
      }
    }
    throw new Error('the config-write bucket never refused');
  }

  it('waits Retry-After and sends the same request again, Idempotency-Key included', async () => {
    const team = await stack.h.newTeam('rate-limited');
    const { client, sent } = recordingClient(team.key);
    await drainConfigWrites(team.teamId);
    const created = await client.POST('/tenants', { body: { external_id: 'patient', name: 'Patient' } });
    expect(created.data.external_id).toBe('patient');

    expect(sent[0]).toMatchObject({ method: 'POST', path: '/tenants', status: 429 });
    expect(sent.at(-1)).toMatchObject({ status: 201 });
    expect(new Set(sent.map((request) => request.idempotencyKey)).size).toBe(1);
    // Retry-After is 1 second at one write per second.
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('answers a Retry-After longer than its maximum at once, as the typed 429', async () => {
    const team = await stack.h.newTeam('impatient');
    const { client, sent } = recordingClient(team.key, { maxRetryAfterSeconds: 0 });
    await drainConfigWrites(team.teamId);
    const refused = await client
      .POST('/tenants', { body: { external_id: 'impatient', name: 'Impatient' } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SvcApiError);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 1 });
    expect(sent).toHaveLength(1);
  });

  it('answers a 503 whose Retry-After is past its maximum at once (a paused source asks for 60 seconds)', async () => {
    const { client, sent } = recordingClient(stack.h.team.key);
    const tenantId = (await client.POST('/tenants', { body: { external_id: 'sources', name: 'Sources' } })).data.id;
    const source = await client.POST('/sources', {
      body: { tenant_id: tenantId, name: 'paused', verification: { kind: 'bearer' }, event_type: 'order.created' },
    });
    await client.PATCH('/sources/{id}', {
      params: { path: { id: source.data.id }, header: { 'If-Match': source.etag! } },
      body: { status: 'paused' },
    });
    const token = source.data.receive_url!.split('/').at(-1)!;
    const started = Date.now();
    const refused = await client
      .POST('/receive/{token}', { params: { path: { token } }, body: '{"order":1}' })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 503, code: 'temporarily_unavailable', retryAfter: 60 });
    expect(sent.filter((request) => request.path.startsWith('/receive/'))).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops after its retries', async () => {
    const team = await stack.h.newTeam('no-retries');
    const { client, sent } = recordingClient(team.key, { retries: 0 });
    await drainConfigWrites(team.teamId);
    await expect(client.POST('/event_types', { body: { name: 'order.placed' } })).rejects.toMatchObject({
      status: 429,
      code: 'rate_limited',
    });
    expect(sent).toHaveLength(1);
  });
});
