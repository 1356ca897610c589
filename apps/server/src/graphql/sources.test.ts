import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '@svc/core';
import { post, startHarness, uniqueKey, type ApiResponse, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

/**
 * Sources through GraphQL over the real server and database; captures go through POST /v1/receive/{token} over
 * real HTTP. The server sits behind a "proxy": receive URLs carry the public base URL, and the tests call the
 * same path on the local address.
 */
const PUBLIC_BASE = 'https://hooks.svc.test';
const RECEIVE_PREFIX = `${PUBLIC_BASE}/v1/receive/`;

let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let tenantId: string;
beforeAll(async () => {
  h = await startHarness({ publicBaseUrl: PUBLIC_BASE });
  gql = graphqlClient(h);
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  const tenant = await gql('mutation { createTenant(input: { externalId: "capture", name: "Capture" }) { id } }');
  tenantId = tenant.body.data.createTenant.id;
  expect((await post(h, '/event_types', { name: 'capture.event' })).status).toBe(201);
});
afterAll(async () => {
  await h.close();
});

const SOURCE_FIELDS = `id tenantId name verification kind eventType eventTypePath eventTypePrefix billingKeyId status
  secretRotationEndsAt tokenRotationEndsAt secretVersion tokenVersion metadata version etag createdAt updatedAt`;
const CREATE = `mutation($input: CreateSourceInput!, $key: String) {
  createSource(input: $input, idempotencyKey: $key) { source { ${SOURCE_FIELDS} } receiveUrl secret }
}`;
const GET = `query($id: ID!) { source(id: $id) { ${SOURCE_FIELDS} } }`;
const LIST = `query($tenantId: ID, $first: Int, $after: String) {
  sources(tenantId: $tenantId, first: $first, after: $after) { nodes { ${SOURCE_FIELDS} } nextCursor }
}`;
const UPDATE = `mutation($id: ID!, $etag: String!, $input: UpdateSourceInput!) {
  updateSource(id: $id, etag: $etag, input: $input) { ${SOURCE_FIELDS} }
}`;
const DELETE = `mutation($id: ID!, $etag: String!) { deleteSource(id: $id, etag: $etag) }`;
const ROTATE_TOKEN = `mutation($id: ID!, $etag: String!, $overlap: Int, $key: String) {
  rotateSourceToken(id: $id, etag: $etag, overlapSeconds: $overlap, idempotencyKey: $key) {
    source { ${SOURCE_FIELDS} } receiveUrl secret
  }
}`;
const ROTATE_SECRET = `mutation($id: ID!, $etag: String!, $secret: String, $overlap: Int, $key: String) {
  rotateSourceSecret(id: $id, etag: $etag, secret: $secret, overlapSeconds: $overlap, idempotencyKey: $key) {
    source { ${SOURCE_FIELDS} } receiveUrl secret
  }
}`;

interface Created {
  source: Record<string, unknown> & { id: string; etag: string };
  receiveUrl: string;
  secret: string | null;
}

async function createSource(input: Record<string, unknown>): Promise<Created> {
  const created = await gql(CREATE, { input: { tenantId, eventType: 'capture.event', ...input } });
  expect(created.body.errors).toBeUndefined();
  return created.body.data.createSource;
}

const createBearer = (name: string) => createSource({ name, verification: { kind: 'bearer' } });

function tokenOf(receiveUrl: string): string {
  expect(receiveUrl.startsWith(RECEIVE_PREFIX)).toBe(true);
  return receiveUrl.slice(RECEIVE_PREFIX.length);
}

/** What a provider does: POST to the receive URL (on the local address) with its bearer token. */
function receive(receiveUrl: string, body: string, bearer: string): Promise<ApiResponse> {
  return h.request('POST', `/receive/${tokenOf(receiveUrl)}`, {
    key: null,
    headers: { authorization: `Bearer ${bearer}` },
    body,
    raw: true,
  });
}

async function etagOf(id: string): Promise<string> {
  const read = await gql(GET, { id });
  expect(read.body.errors).toBeUndefined();
  return read.body.data.source.etag;
}

describe('GraphQL sources', () => {
  it('createSource shows the receive URL and a generated bearer secret once, and the URL captures with it', async () => {
    const { source, receiveUrl, secret } = await createSource({
      name: 'Billing provider',
      verification: { kind: 'bearer' },
      metadata: { team: 'payments' },
    });
    expect(source).toMatchObject({
      tenantId,
      name: 'Billing provider',
      verification: { kind: 'bearer' },
      kind: 'bearer',
      eventType: 'capture.event',
      eventTypePath: null,
      eventTypePrefix: null,
      billingKeyId: h.team.keyId,
      status: 'active',
      secretRotationEndsAt: null,
      tokenRotationEndsAt: null,
      secretVersion: 1,
      tokenVersion: 1,
      metadata: { team: 'payments' },
      createdAt: h.clock.now().toISOString(),
    });
    expect(source.id).toMatch(/^wds_/);
    expect(tokenOf(receiveUrl)).toMatch(/^rcv_[A-Za-z0-9_-]{43}$/);
    expect(secret).toEqual(expect.any(String));
    expect(secret!.length).toBeGreaterThanOrEqual(32);

    const captured = await receive(receiveUrl, '{"paid": 1}', secret!);
    expect(captured.status, captured.text).toBe(200);
    expect(captured.json).toEqual({ message_id: expect.stringMatching(/^wdm_/), duplicate: false });
    const refused = await receive(receiveUrl, '{"paid": 2}', 'not-the-secret');
    expect(refused.status).toBe(401);

    // A provider-issued secret is used and never shown; the kind's defaults are filled in.
    const hmac = await createSource({
      name: 'Signed provider',
      verification: { kind: 'hmac', header: 'x-signature', secret: 'provider-issued-secret' },
    });
    expect(hmac.secret).toBeNull();
    expect(tokenOf(hmac.receiveUrl)).toMatch(/^rcv_/);
    expect(hmac.source.verification).toEqual({
      kind: 'hmac',
      header: 'x-signature',
      algorithm: 'sha256',
      encoding: 'hex',
      prefix: null,
      timestamp_header: null,
      signed_content: '{body}',
      event_id_header: null,
    });

    const invalid = await gql(CREATE, {
      input: { tenantId, name: 'No secret', eventType: 'capture.event', verification: { kind: 'hmac', header: 'x' } },
    });
    expect(invalid.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'verification.secret' });
  });

  it('source and sources never show the secret or the receive URL', async () => {
    const { source, receiveUrl, secret } = await createBearer('Quiet');
    const token = tokenOf(receiveUrl);

    const read = await gql(GET, { id: source.id });
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.source).toEqual(source);
    const list = await gql(LIST, { tenantId, first: 200 });
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data.sources.nodes).toContainEqual(source);
    for (const answer of [read, list]) {
      const text = JSON.stringify(answer.body);
      expect(text).not.toContain(secret!);
      expect(text).not.toContain(token);
    }

    // There is no field to ask for them.
    const asked = await gql('query($id: ID!) { source(id: $id) { id secret receiveUrl } }', { id: source.id });
    expect(asked.status).toBe(400);
    expect(asked.body.errors.map((e: { message: string }) => e.message)).toEqual([
      'Cannot query field "secret" on type "Source".',
      'Cannot query field "receiveUrl" on type "Source".',
    ]);
  });

  it('pages sources of a tenant with first and after', async () => {
    const other = await gql('mutation { createTenant(input: { externalId: "paging", name: "Paging" }) { id } }');
    const pagingTenant = other.body.data.createTenant.id as string;
    const ids: string[] = [];
    for (const name of ['P1', 'P2', 'P3']) {
      const created = await gql(CREATE, {
        input: { tenantId: pagingTenant, name, eventType: 'capture.event', verification: { kind: 'bearer' } },
      });
      ids.push(created.body.data.createSource.source.id);
    }
    const first = await gql(LIST, { tenantId: pagingTenant, first: 2 });
    expect(first.body.data.sources.nodes.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data.sources.nextCursor).toEqual(expect.any(String));
    const rest = await gql(LIST, { tenantId: pagingTenant, first: 2, after: first.body.data.sources.nextCursor });
    expect(rest.body.data.sources).toEqual({ nodes: [expect.objectContaining({ id: ids[2] })], nextCursor: null });
  });

  it('updateSource changes the source with its etag, refuses a stale one, and a paused source answers 503', async () => {
    const { source, receiveUrl, secret } = await createBearer('Before');
    const updated = await gql(UPDATE, {
      id: source.id,
      etag: source.etag,
      input: { name: 'After', status: 'paused', eventTypePath: '/type', eventTypePrefix: 'vendor.' },
    });
    expect(updated.body.errors).toBeUndefined();
    expect(updated.body.data.updateSource).toMatchObject({
      id: source.id,
      name: 'After',
      status: 'paused',
      eventType: null,
      eventTypePath: '/type',
      eventTypePrefix: 'vendor.',
      version: String(Number(source['version']) + 1),
    });
    expect(updated.body.data.updateSource.etag).not.toBe(source.etag);

    const stale = await gql(UPDATE, { id: source.id, etag: source.etag, input: { name: 'Lost' } });
    expect(stale.body.errors[0].extensions.code).toBe('revision_conflict');
    expect((await gql(GET, { id: source.id })).body.data.source.name).toBe('After');

    const paused = await receive(receiveUrl, '{"type": "paid"}', secret!);
    expect(paused.status).toBe(503);
    expect(paused.headers.get('retry-after')).toBe('60');

    const badStatus = await gql(UPDATE, {
      id: source.id,
      etag: updated.body.data.updateSource.etag,
      input: { status: 'sleeping' },
    });
    expect(badStatus.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'status' });
  });

  it('rotateSourceToken shows the new receive URL once; the old one keeps answering during the overlap', async () => {
    const { source, receiveUrl: oldUrl, secret } = await createBearer('Rotating URL');
    const endsAt = new Date(h.clock.now().getTime() + 60 * SECOND).toISOString();
    const rotated = await gql(ROTATE_TOKEN, { id: source.id, etag: source.etag, overlap: 60 });
    expect(rotated.body.errors).toBeUndefined();
    const { source: after, receiveUrl: newUrl, secret: noSecret } = rotated.body.data.rotateSourceToken;
    expect(noSecret).toBeNull();
    expect(tokenOf(newUrl)).toMatch(/^rcv_/);
    expect(newUrl).not.toBe(oldUrl);
    expect(after).toMatchObject({
      tokenVersion: 2,
      secretVersion: 1,
      tokenRotationEndsAt: endsAt,
      version: String(Number(source['version']) + 1),
    });
    expect(JSON.stringify((await gql(GET, { id: source.id })).body)).not.toContain(tokenOf(newUrl));

    const viaOld = await receive(oldUrl, '{"n": "old"}', secret!);
    expect(viaOld.status, viaOld.text).toBe(200);
    const viaNew = await receive(newUrl, '{"n": "new"}', secret!);
    expect(viaNew.status, viaNew.text).toBe(200);
    expect(viaNew.json.message_id).not.toBe(viaOld.json.message_id);

    // While the old URL is in its overlap, only an immediate rotation is accepted.
    const again = await gql(ROTATE_TOKEN, { id: source.id, etag: after.etag });
    expect(again.body.errors[0].extensions.code).toBe('invalid_state');

    h.clock.advance(61 * SECOND);
    expect((await receive(oldUrl, '{"n": "late"}', secret!)).status).toBe(404);
    expect((await receive(newUrl, '{"n": "late"}', secret!)).status).toBe(200);
    expect((await gql(GET, { id: source.id })).body.data.source.tokenRotationEndsAt).toBeNull();
  });

  it('rotateSourceSecret shows a generated secret once; the old one verifies during the overlap', async () => {
    const { source, receiveUrl, secret: oldSecret } = await createBearer('Rotating secret');
    const rotated = await gql(ROTATE_SECRET, { id: source.id, etag: source.etag, overlap: 30 });
    expect(rotated.body.errors).toBeUndefined();
    const { source: after, receiveUrl: noUrl, secret: newSecret } = rotated.body.data.rotateSourceSecret;
    expect(noUrl).toBeNull();
    expect(newSecret).toEqual(expect.any(String));
    expect(newSecret).not.toBe(oldSecret);
    const endsAt = new Date(h.clock.now().getTime() + 30 * SECOND).toISOString();
    expect(after).toMatchObject({ secretVersion: 2, tokenVersion: 1, secretRotationEndsAt: endsAt });

    expect((await receive(receiveUrl, '{"s": "old"}', oldSecret!)).status).toBe(200);
    expect((await receive(receiveUrl, '{"s": "new"}', newSecret)).status).toBe(200);
    h.clock.advance(31 * SECOND);
    expect((await receive(receiveUrl, '{"s": "old late"}', oldSecret!)).status).toBe(401);
    expect((await receive(receiveUrl, '{"s": "new late"}', newSecret)).status).toBe(200);

    // A kind whose provider issues the secret takes the new one and shows nothing back.
    const hmac = await createSource({
      name: 'Provider rotation',
      verification: { kind: 'hmac', header: 'x-signature', secret: 'provider-secret-one' },
    });
    const provided = await gql(ROTATE_SECRET, {
      id: hmac.source.id,
      etag: hmac.source.etag,
      secret: 'provider-secret-two',
      overlap: 0,
    });
    expect(provided.body.errors).toBeUndefined();
    expect(provided.body.data.rotateSourceSecret).toMatchObject({
      receiveUrl: null,
      secret: null,
      source: { secretVersion: 2, secretRotationEndsAt: null },
    });
    const missing = await gql(ROTATE_SECRET, { id: hmac.source.id, etag: await etagOf(hmac.source.id) });
    expect(missing.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'secret' });
  });

  it('deleteSource removes the source and its receive URL stops answering', async () => {
    const { source, receiveUrl, secret } = await createBearer('Doomed');
    const stale = await gql(DELETE, { id: source.id, etag: 'W/"stale"' });
    expect(stale.body.errors[0].extensions.code).toBe('revision_conflict');

    const deleted = await gql(DELETE, { id: source.id, etag: source.etag });
    expect(deleted.body).toEqual({ data: { deleteSource: true } });
    const read = await gql(GET, { id: source.id });
    expect(read.body.errors[0].extensions.code).toBe('not_found');
    const list = await gql(LIST, { tenantId, first: 200 });
    expect(list.body.data.sources.nodes.map((s: { id: string }) => s.id)).not.toContain(source.id);
    expect((await receive(receiveUrl, '{"gone": true}', secret!)).status).toBe(404);
  });

  it('verifierKinds lists the eight kinds with the settings each takes', async () => {
    const answer = await gql('{ verifierKinds { kind generatesSecret settings } }');
    expect(answer.body.errors).toBeUndefined();
    const kinds: { kind: string; generatesSecret: boolean; settings: Record<string, unknown> }[] =
      answer.body.data.verifierKinds;
    expect(kinds.map((k) => [k.kind, k.generatesSecret])).toEqual([
      ['standard_webhooks', true],
      ['hmac', false],
      ['bearer', true],
      ['payments', false],
      ['codehost', false],
      ['commerce', false],
      ['chat', false],
      ['telephony', false],
    ]);
    const noSettings = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {},
      additionalProperties: false,
    };
    for (const kind of kinds.filter((k) => k.kind !== 'hmac')) expect(kind.settings, kind.kind).toEqual(noSettings);

    const hmac = kinds.find((k) => k.kind === 'hmac')!.settings as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, Record<string, unknown>>;
    };
    expect(hmac.required).toEqual(['header']);
    expect(hmac.additionalProperties).toBe(false);
    expect(Object.keys(hmac.properties)).toEqual([
      'header',
      'algorithm',
      'encoding',
      'prefix',
      'timestamp_header',
      'signed_content',
      'event_id_header',
    ]);
    expect(hmac.properties['header']).toMatchObject({ type: 'string', maxLength: 100 });
    expect(hmac.properties['algorithm']).toEqual({
      type: 'string',
      enum: ['sha1', 'sha256', 'sha512'],
      default: 'sha256',
    });
    expect(hmac.properties['encoding']).toEqual({ type: 'string', enum: ['hex', 'base64'], default: 'hex' });
    expect(hmac.properties['signed_content']).toMatchObject({ type: 'string', default: '{body}' });
    expect(hmac.properties['timestamp_header']).toMatchObject({ default: null });
  });

  it('recentMessages lists what the source captured', async () => {
    const { source, receiveUrl, secret } = await createSource({
      name: 'Capturing',
      verification: { kind: 'bearer' },
      eventType: null,
      eventTypePath: '/type',
      eventTypePrefix: 'capture.',
    });
    const captured = await receive(receiveUrl, '{"type": "event", "n": 1}', secret!);
    expect(captured.status, captured.text).toBe(200);
    // Lists end just before now (created_before is exclusive) and the harness clock stands still.
    h.clock.advance(SECOND);

    const read = await gql(
      `query($id: ID!) { source(id: $id) { id recentMessages(first: 5) { id sourceId origin eventType tenantId } } }`,
      { id: source.id },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.source.recentMessages).toEqual([
      {
        id: captured.json.message_id,
        sourceId: source.id,
        origin: 'source',
        eventType: 'capture.event',
        tenantId,
      },
    ]);
  });

  it('recentRejections lists the refused captures with their reason, folded per reason', async () => {
    const { source, receiveUrl } = await createBearer('Refusing');
    const refused = await receive(receiveUrl, '{"forged": true}', 'forged-token');
    expect(refused.status).toBe(401);
    const missing = await h.request('POST', `/receive/${tokenOf(receiveUrl)}`, { key: null, body: {} });
    expect(missing.status).toBe(401);
    expect((await receive(receiveUrl, '{"forged": 2}', 'forged-token')).status).toBe(401);

    const query = `query($id: ID!) {
      source(id: $id) { recentRejections { type resourceId tenantId data coalesced count } recentMessages { id } }
    }`;
    const byReason = (rejections: { data: { reason: string } }[]) =>
      [...rejections].sort((a, b) => a.data.reason.localeCompare(b.data.reason));
    // The feed lists an event once no older transaction is still running. A refusal within 60 seconds of one with
    // the same reason folds into it; another reason is an event of its own, with its own count.
    await expect
      .poll(async () => {
        const found = (await gql(query, { id: source.id })).body.data.source;
        return { ...found, recentRejections: byReason(found.recentRejections) };
      })
      .toEqual({
        recentRejections: [
          {
            type: 'webhooks.source.rejected',
            resourceId: source.id,
            tenantId,
            data: { source_id: source.id, reason: 'bad_signature' },
            coalesced: true,
            count: 2,
          },
          {
            type: 'webhooks.source.rejected',
            resourceId: source.id,
            tenantId,
            data: { source_id: source.id, reason: 'missing_signature' },
            coalesced: false,
            count: 1,
          },
        ],
        recentMessages: [],
      });
  });

  it('an idempotent createSource replay shows the receive URL and secret only to the key that made them', async () => {
    const key = uniqueKey();
    const input = { tenantId, name: 'Once', eventType: 'capture.event', verification: { kind: 'bearer' } };
    const first = await gql(CREATE, { input, key });
    expect(first.body.errors).toBeUndefined();
    const created = first.body.data.createSource;
    expect(tokenOf(created.receiveUrl)).toMatch(/^rcv_/);

    const again = await gql(CREATE, { input, key });
    expect(again.body.data.createSource).toEqual(created);
    const sources = await gql(LIST, { tenantId, first: 200 });
    expect(sources.body.data.sources.nodes.filter((s: { name: string }) => s.name === 'Once')).toHaveLength(1);

    const otherKey = await h.services.teams.createKey(h.team.teamId);
    const byOther = await gql(CREATE, { input, key }, { key: otherKey.secret });
    expect(byOther.body.errors).toBeUndefined();
    expect(byOther.body.data.createSource).toEqual({ source: created.source, receiveUrl: null, secret: null });

    // Once the URL is rotated, the replay no longer shows the old one; the secret is still current.
    const rotated = await gql(ROTATE_TOKEN, { id: created.source.id, etag: created.source.etag, overlap: 0 });
    expect(rotated.body.errors).toBeUndefined();
    const afterRotation = await gql(CREATE, { input, key });
    expect(afterRotation.body.data.createSource).toEqual({
      source: created.source,
      receiveUrl: null,
      secret: created.secret,
    });

    const conflict = await gql(CREATE, { input: { ...input, name: 'Twice' }, key });
    expect(conflict.body.errors[0].extensions.code).toBe('idempotency_conflict');
  });
});
