import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyV1aAsSpecSays } from '@svc/signing/src/testing/v1a-verifier.js';
import { post, uniqueKey } from '../../../server/src/testing/harness.js';
import { graphqlClient } from '../../../server/src/graphql/test-client.js';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack();
});
afterAll(async () => {
  await stack.close();
});

const now = () => Math.floor(Date.now() / 1000);

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function signed(got: Received) {
  return {
    'webhook-id': String(got.headers['webhook-id']),
    'webhook-timestamp': String(got.headers['webhook-timestamp']),
    'webhook-signature': String(got.headers['webhook-signature']),
  };
}

/** Publishes one message and waits for its first arrival at `path`. */
async function deliverOne(tenantId: string, path: string, payload: unknown): Promise<Received> {
  const id = await stack.publish(tenantId, payload);
  return stack.until(`the delivery of ${id}`, () =>
    stack.received.find((r) => r.path === path && r.headers['webhook-id'] === id),
  );
}

describe('ed25519 signatures (Standard Webhooks v1a)', () => {
  const h = () => stack.h;

  it('an ed25519 endpoint shows its public key, never a secret; an hmac endpoint answers exactly as before', async () => {
    const ed = await stack.setup('/ed-shape', { signature_scheme: 'ed25519' });
    const read = await h().request('GET', `/endpoints/${ed.endpointId}`);
    expect(read.json.signature_scheme).toBe('ed25519');
    expect(read.json.public_key).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(ed.secret).toBeUndefined();
    expect(read.text).not.toContain('whsk_');
    expect(read.text).not.toContain('whsec_');

    const hmac = await stack.setup('/hmac-shape');
    expect(hmac.secret).toMatch(/^whsec_/);
    const plain = await h().request('GET', `/endpoints/${hmac.endpointId}`);
    expect(Object.keys(plain.json)).toEqual([
      'id',
      'tenant_id',
      'url',
      'name',
      'description',
      'events',
      'filter',
      'transform',
      'transform_version',
      'status',
      'disabled_reason',
      'rate_per_second',
      'max_concurrency',
      'retry_delays_seconds',
      'timeout_seconds',
      'headers',
      'has_authorization',
      'metadata',
      'secret_version',
      'old_secret_expires_at',
      'health',
      'queued_count',
      'url_revision',
      'version',
      'created_at',
      'updated_at',
    ]);

    // The secret key is sealed at rest: the stored bytes hold no whsk_ text.
    const rows: { sealed: Buffer }[] = await h().services.db.query(
      'SELECT secret_sealed AS sealed FROM endpoint_secrets WHERE endpoint_id = $1',
      [ed.endpointId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.sealed.toString('latin1')).not.toContain('whsk_');

    const bad = await post(h(), '/endpoints', {
      tenant_id: ed.tenantId,
      url: 'https://receiver.example.com/x',
      signature_scheme: 'rsa',
    });
    expect(bad.status).toBe(422);
    expect(bad.json.error).toMatchObject({ code: 'invalid_field', field: 'signature_scheme' });
    const patch = await h().request('PATCH', `/endpoints/${ed.endpointId}`, {
      ifMatch: read.headers.get('etag')!,
      body: { signature_scheme: 'hmac' },
    });
    expect(patch.status).toBe(422);
    expect(patch.json.error).toMatchObject({ code: 'invalid_field', field: 'signature_scheme' });
  });

  it('signs each delivery with v1a that the public key alone verifies; a tampered body does not', async () => {
    const { tenantId, endpointId } = await stack.setup('/ed', { signature_scheme: 'ed25519' });
    const publicKey = (await h().request('GET', `/endpoints/${endpointId}`)).json.public_key as string;
    const got = await deliverOne(tenantId, '/ed', { amount: 1.5, note: 'café' });
    const headers = signed(got);
    expect(headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(verifyV1aAsSpecSays(publicKey, headers, got.body, now())).toBe(true);
    const tampered = Buffer.from(got.body.toString('utf8').replace('café', 'cafe'));
    expect(verifyV1aAsSpecSays(publicKey, headers, tampered, now())).toBe(false);
  });

  it('a rotation with an overlap sends one v1a per key; receivers holding the old or the new key verify', async () => {
    const { tenantId, endpointId } = await stack.setup('/ed-rot', { signature_scheme: 'ed25519' });
    const before = await h().request('GET', `/endpoints/${endpointId}`);
    const oldKey = before.json.public_key as string;
    const rotated = await h().request('POST', `/endpoints/${endpointId}/rotate_secret`, {
      idempotencyKey: uniqueKey(),
      ifMatch: before.headers.get('etag')!,
      body: { overlap_seconds: 3600 },
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.json.signing_secret).toBeUndefined();
    expect(rotated.text).not.toContain('whsk_');
    const newKey = rotated.json.public_key as string;
    expect(newKey).toMatch(/^whpk_/);
    expect(newKey).not.toBe(oldKey);
    expect(rotated.json.secret_version).toBe(2);

    const got = await deliverOne(tenantId, '/ed-rot', { n: 1 });
    const headers = signed(got);
    expect(headers['webhook-signature'].split(' ').map((part) => part.split(',')[0])).toEqual(['v1a', 'v1a']);
    expect(verifyV1aAsSpecSays(newKey, headers, got.body, now())).toBe(true);
    expect(verifyV1aAsSpecSays(oldKey, headers, got.body, now())).toBe(true);

    // Both keys that sign are readable, each with its end: REST, GraphQL (the console and the portal read it).
    const overlapEnd = rotated.json.old_secret_expires_at as string;
    expect(overlapEnd).toBe(new Date(h().clock.now().getTime() + 3600_000).toISOString());
    const during = await h().request('GET', `/endpoints/${endpointId}`);
    expect(during.json.public_key).toBe(newKey);
    expect(during.json.public_keys).toEqual([
      { public_key: newKey, expires_at: null },
      { public_key: oldKey, expires_at: overlapEnd },
    ]);
    expect(rotated.json.public_keys).toEqual(during.json.public_keys);
    const gql = graphqlClient(h());
    const read = await gql(`query($id: ID!) { endpoint(id: $id) { publicKeys { publicKey expiresAt } } }`, {
      id: endpointId,
    });
    expect(read.body.data.endpoint.publicKeys).toEqual([
      { publicKey: newKey, expiresAt: null },
      { publicKey: oldKey, expiresAt: overlapEnd },
    ]);
    // Once the overlap is over only the new key signs, and only it is listed.
    await stack.advance(3601_000);
    const after = await h().request('GET', `/endpoints/${endpointId}`);
    expect(after.json.public_keys).toEqual([{ public_key: newKey, expires_at: null }]);
    const late = signed(await deliverOne(tenantId, '/ed-rot', { n: 2 }));
    expect(late['webhook-signature'].split(' ')).toHaveLength(1);
  });

  it('a move from ed25519 back to hmac keeps the old public key readable through the overlap', async () => {
    const { endpointId } = await stack.setup('/ed-to-hmac', { signature_scheme: 'ed25519' });
    const before = await h().request('GET', `/endpoints/${endpointId}`);
    const rotated = await h().request('POST', `/endpoints/${endpointId}/rotate_secret`, {
      idempotencyKey: uniqueKey(),
      ifMatch: before.headers.get('etag')!,
      body: { overlap_seconds: 600, signature_scheme: 'hmac' },
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.json.signature_scheme).toBeUndefined();
    expect(rotated.json.public_keys).toEqual([
      { public_key: before.json.public_key, expires_at: rotated.json.old_secret_expires_at },
    ]);
  });

  it('an hmac endpoint moves to ed25519 by rotation: during the overlap both v1 and v1a arrive, then only v1a', async () => {
    const { tenantId, endpointId, secret } = await stack.setup('/switch');
    const before = await h().request('GET', `/endpoints/${endpointId}`);
    const rotated = await h().request('POST', `/endpoints/${endpointId}/rotate_secret`, {
      idempotencyKey: uniqueKey(),
      ifMatch: before.headers.get('etag')!,
      body: { overlap_seconds: 3600, signature_scheme: 'ed25519' },
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.json.signature_scheme).toBe('ed25519');
    const publicKey = rotated.json.public_key as string;

    const during = await deliverOne(tenantId, '/switch', { n: 1 });
    const headers = signed(during);
    expect(headers['webhook-signature'].split(' ').map((part) => part.split(',')[0])).toEqual(['v1a', 'v1']);
    expect(verifyV1aAsSpecSays(publicKey, headers, during.body, now())).toBe(true);
    expect(() => new Webhook(secret).verify(during.body, headers)).not.toThrow();

    // Retiring the old secret at once: only v1a signs, and the old HMAC receiver refuses.
    const current = await h().request('GET', `/endpoints/${endpointId}`);
    const retired = await h().request('POST', `/endpoints/${endpointId}/rotate_secret`, {
      idempotencyKey: uniqueKey(),
      ifMatch: current.headers.get('etag')!,
      body: { overlap_seconds: 0 },
    });
    expect(retired.status, retired.text).toBe(200);
    expect(retired.json.signature_scheme).toBe('ed25519');
    const after = await deliverOne(tenantId, '/switch', { n: 2 });
    const afterHeaders = signed(after);
    expect(afterHeaders['webhook-signature']).toMatch(/^v1a,[^ ]+$/);
    expect(verifyV1aAsSpecSays(retired.json.public_key as string, afterHeaders, after.body, now())).toBe(true);
    expect(() => new Webhook(secret).verify(after.body, afterHeaders)).toThrow();
  });

  it('GraphQL: create with signatureScheme, read publicKey; the reveal never carries a secret key', async () => {
    const gql = graphqlClient(h());
    const tenant = await post(h(), '/tenants', { external_id: 'gql-ed', name: 'GraphQL ed25519' });
    const created = await gql(
      `mutation($input: CreateEndpointInput!) {
        createEndpoint(input: $input) { signingSecret endpoint { id signatureScheme publicKey } }
      }`,
      { input: { tenantId: tenant.json.id, url: 'https://receiver.example.com/gql', signatureScheme: 'ed25519' } },
    );
    expect(created.body.errors).toBeUndefined();
    const reveal = created.body.data.createEndpoint;
    expect(reveal.signingSecret).toBeNull();
    expect(reveal.endpoint.signatureScheme).toBe('ed25519');
    expect(reveal.endpoint.publicKey).toMatch(/^whpk_/);
    const rest = await h().request('GET', `/endpoints/${reveal.endpoint.id}`);
    expect(rest.json.public_key).toBe(reveal.endpoint.publicKey);
    const hmac = await gql(
      `mutation($input: CreateEndpointInput!) {
        createEndpoint(input: $input) { signingSecret endpoint { signatureScheme publicKey } }
      }`,
      { input: { tenantId: tenant.json.id, url: 'https://receiver.example.com/gql2' } },
    );
    expect(hmac.body.data.createEndpoint.signingSecret).toMatch(/^whsec_/);
    expect(hmac.body.data.createEndpoint.endpoint).toEqual({ signatureScheme: 'hmac', publicKey: null });
  });
});
