import { createHmac } from 'node:crypto';
import { sign as signCodehost } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '@svc/core';
import { post, startHarness, type ApiResponse, type Harness } from '../testing/harness.js';
import { rawPost } from '../testing/raw-post.js';

/**
 * POST /receive/{token} through real HTTP for every verifier kind: valid, tampered, stale, duplicated security
 * header, rotated secrets (old and new during the overlap, only the new after) and duplicate requests. Signatures
 * come from each provider's official library where one exists (standardwebhooks, stripe, @octokit/webhooks-methods,
 * twilio); Slack and Shopify publish their schemes, computed here with node:crypto as their docs show. The service
 * runs behind a "proxy": its public base URL differs from the address the tests call, and the telephony signature
 * is over the public URL.
 */
const PUBLIC_BASE = 'https://hooks.svc.test';
let h: Harness;
let tenantId: string;

beforeAll(async () => {
  h = await startHarness({ publicBaseUrl: PUBLIC_BASE });
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'capture', name: 'Capture' })).json.id;
  for (const name of ['capture.event', 'charge.succeeded', 'push', 'orders.create', 'event_callback', 'call.incoming'])
    await post(h, '/event_types', { name });
});
afterAll(async () => {
  await h.close();
});

interface Signed {
  headers: [string, string][];
  body: string;
  contentType: string;
}

/** Signs `body` for a kind with `secret` at `at` (unix seconds); `path` is the receive URL's path and query. */
type Signer = (secret: string, body: string, at: number, publicUrl: string) => Signed;

const json = 'application/json';
const hmacHex = (key: string | Buffer, algorithm: string, content: string) =>
  createHmac(algorithm, key).update(content).digest('hex');

const SIGNERS: Record<
  string,
  {
    settings: Record<string, unknown>;
    secret: string | null;
    sign: Signer;
    eventType: string;
    body: (n: number) => string;
  }
> = {
  standard_webhooks: {
    settings: {},
    secret: null,
    eventType: 'capture.event',
    body: (n) => JSON.stringify({ type: 'capture.event', n }),
    sign: (secret, body, at) => {
      const id = `msg_${createHmac('sha256', 'id').update(body).digest('hex').slice(0, 16)}`;
      const signature = new Webhook(secret).sign(id, new Date(at * 1000), body);
      return {
        headers: [
          ['webhook-id', id],
          ['webhook-timestamp', String(at)],
          ['webhook-signature', signature],
        ],
        body,
        contentType: json,
      };
    },
  },
  hmac: {
    settings: {
      header: 'x-acme-signature',
      algorithm: 'sha512',
      encoding: 'hex',
      prefix: 'sha512=',
      timestamp_header: 'x-acme-timestamp',
      signed_content: '{timestamp}.{body}',
    },
    secret: 'acme-shared-secret-1',
    eventType: 'capture.event',
    body: (n) => JSON.stringify({ kind: 'acme', n }),
    sign: (secret, body, at) => ({
      headers: [
        ['x-acme-signature', `sha512=${hmacHex(secret, 'sha512', `${at}.${body}`)}`],
        ['x-acme-timestamp', String(at)],
      ],
      body,
      contentType: json,
    }),
  },
  bearer: {
    settings: {},
    secret: null,
    eventType: 'capture.event',
    body: (n) => JSON.stringify({ bearer: n }),
    sign: (secret, body) => ({ headers: [['authorization', `Bearer ${secret}`]], body, contentType: json }),
  },
  payments: {
    settings: {},
    secret: 'whsec_test_payments_secret_0123456789',
    eventType: 'charge.succeeded',
    body: (n) => JSON.stringify({ id: `evt_${n}`, object: 'event', type: 'charge.succeeded' }),
    sign: (secret, body, at) => ({
      headers: [
        ['stripe-signature', Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: at })],
      ],
      body,
      contentType: json,
    }),
  },
  codehost: {
    settings: {},
    secret: 'codehost-webhook-secret',
    eventType: 'push',
    body: (n) => JSON.stringify({ ref: 'refs/heads/main', n }),
    sign: () => {
      throw new Error('async signer: see signCodehostRequest');
    },
  },
  commerce: {
    settings: {},
    secret: 'shpss_commerce_app_secret',
    eventType: 'orders.create',
    body: (n) => JSON.stringify({ id: n, email: 'a@example.com' }),
    sign: (secret, body) => ({
      headers: [
        ['x-shopify-hmac-sha256', createHmac('sha256', secret).update(body).digest('base64')],
        ['x-shopify-topic', 'orders/create'],
        ['x-shopify-webhook-id', `wh-${createHmac('sha256', 'w').update(body).digest('hex').slice(0, 12)}`],
      ],
      body,
      contentType: json,
    }),
  },
  chat: {
    settings: {},
    secret: '8f742231b10e8888abcd99yyyzzz85a5',
    eventType: 'event_callback',
    body: (n) => JSON.stringify({ type: 'event_callback', event_id: `Ev${n}`, event: { type: 'message' } }),
    sign: (secret, body, at) => ({
      headers: [
        ['x-slack-signature', `v0=${hmacHex(secret, 'sha256', `v0:${at}:${body}`)}`],
        ['x-slack-request-timestamp', String(at)],
      ],
      body,
      contentType: json,
    }),
  },
  telephony: {
    settings: {},
    secret: 'twilio_auth_token_0123456789abcdef',
    eventType: 'call.incoming',
    body: (n) => new URLSearchParams({ CallSid: `CA${n}`, From: '+15551230000', To: '+15559870000' }).toString(),
    sign: (secret, body, _at, publicUrl) => ({
      headers: [
        [
          'x-twilio-signature',
          twilio.getExpectedTwilioSignature(secret, publicUrl, Object.fromEntries(new URLSearchParams(body))),
        ],
      ],
      body,
      contentType: 'application/x-www-form-urlencoded',
    }),
  },
};

const KINDS = Object.keys(SIGNERS);

interface CreatedSource {
  id: string;
  token: string;
  secret: string;
  receiveUrl: string;
  etag: string;
}

async function createSource(kind: string): Promise<CreatedSource> {
  const signer = SIGNERS[kind]!;
  const r = await post(h, '/sources', {
    tenant_id: tenantId,
    name: `${kind} source`,
    verification: { kind, ...signer.settings, ...(signer.secret ? { secret: signer.secret } : {}) },
    event_type: signer.eventType,
  });
  expect(r.status, r.text).toBe(201);
  const receiveUrl: string = r.json.receive_url;
  expect(receiveUrl.startsWith(`${PUBLIC_BASE}/v1/receive/`)).toBe(true);
  return {
    id: r.json.id,
    token: receiveUrl.slice(`${PUBLIC_BASE}/v1/receive/`.length),
    secret: signer.secret ?? r.json.secret,
    receiveUrl,
    etag: r.headers.get('etag')!,
  };
}

async function signFor(kind: string, secret: string, body: string, at: number, publicUrl: string): Promise<Signed> {
  if (kind === 'codehost')
    return {
      headers: [
        ['x-hub-signature-256', await signCodehost(secret, body)],
        ['x-github-delivery', `d-${createHmac('sha256', 'd').update(body).digest('hex').slice(0, 12)}`],
        ['x-github-event', 'push'],
      ],
      body,
      contentType: json,
    };
  return SIGNERS[kind]!.sign(secret, body, at, publicUrl);
}

/** Sends through real HTTP with the exact header list: a header given twice goes on the wire twice. */
async function send(source: { token: string }, signed: Signed): Promise<ApiResponse> {
  const headers: Record<string, string | string[]> = { 'content-type': signed.contentType };
  for (const [name, value] of signed.headers) {
    const seen = headers[name];
    headers[name] = seen === undefined ? value : [...[seen].flat(), value];
  }
  return rawPost(`${h.baseUrl}/receive/${source.token}`, signed.body, headers);
}

/** The source's webhooks.source.rejected events (the feed shows them once older transactions are done). */
/**
 * The source's rejection events once they count `total` refusals (rejections fold per reason, so several reasons
 * are several events, each listed once no older transaction is still running); what there is after 2.5 s otherwise.
 */
async function rejections(sourceId: string, total = 1): Promise<Record<string, unknown>[]> {
  let found: Record<string, unknown>[] = [];
  for (let i = 0; i < 50; i += 1) {
    const page = await h.services.events.listEvents(
      { actor: h.team },
      { type: 'webhooks.source.rejected', resource_id: sourceId },
    );
    found = page.data.map((e) => ({ ...e.data, count: e.count }));
    if (found.reduce((sum, e) => sum + Number(e['count']), 0) >= total) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return found;
}

const nowSeconds = () => Math.floor(h.clock.now().getTime() / 1000);

describe.each(KINDS)('%s', (kind) => {
  it('captures a valid request as a message of the tenant and answers as the kind documents', async () => {
    const source = await createSource(kind);
    const body = SIGNERS[kind]!.body(1);
    const r = await send(source, await signFor(kind, source.secret, body, nowSeconds(), source.receiveUrl));
    expect(r.status, r.text).toBe(200);
    const messages = await h.request('GET', `/messages?source_id=${source.id}`);
    expect(messages.json.data).toHaveLength(1);
    const [message] = messages.json.data;
    expect(message).toMatchObject({
      origin: 'source',
      source_id: source.id,
      tenant_id: tenantId,
      event_type: SIGNERS[kind]!.eventType,
    });
    const content = await h.request('GET', `/messages/${message.id}/content`);
    expect(content.text).toBe(body);
    if (kind === 'chat') expect(r.text).toBe('');
    else if (kind === 'telephony') expect(r.text).toContain('<Response/>');
    else expect(JSON.parse(r.text)).toEqual({ message_id: message.id, duplicate: false });
  });

  it('refuses a tampered body, a wrong secret and a missing signature with 401 and emits webhooks.source.rejected', async () => {
    const source = await createSource(kind);
    const body = SIGNERS[kind]!.body(2);
    const signed = await signFor(kind, source.secret, body, nowSeconds(), source.receiveUrl);
    // A bearer token does not cover the body: there is no tampering to detect.
    const refusals = kind === 'bearer' ? 2 : 3;
    if (kind !== 'bearer') {
      const tampered = await send(source, {
        ...signed,
        body: kind === 'telephony' ? `${body}&Extra=1` : body.replace('}', ',"x":1}'),
      });
      expect(tampered.status, tampered.text).toBe(401);
      expect(tampered.json.error.code).toBe('unauthorized');
      expect(tampered.text).not.toContain(source.secret);
    }
    const otherSecret =
      kind === 'standard_webhooks' ? `whsec_${Buffer.alloc(32, 7).toString('base64')}` : `${source.secret}x`;
    const wrong = await send(source, await signFor(kind, otherSecret, body, nowSeconds(), source.receiveUrl));
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.message).toContain('bad_signature');
    const missing = await send(source, { ...signed, headers: [] });
    expect(missing.status).toBe(401);
    expect(missing.json.error.message).toContain('missing_signature');
    const events = await rejections(source.id, refusals);
    expect(events[0]).toMatchObject({ source_id: source.id, reason: expect.stringMatching(/signature/) });
    expect(events.reduce((sum, e) => sum + Number(e['count']), 0)).toBe(refusals);
    const stored = await h.services.db.query('SELECT count(*)::int AS n FROM messages WHERE source_id = $1', [
      source.id,
    ]);
    expect(stored[0].n).toBe(0);
  });

  it('refuses a request whose security header appears twice', async () => {
    const source = await createSource(kind);
    const signed = await signFor(kind, source.secret, SIGNERS[kind]!.body(3), nowSeconds(), source.receiveUrl);
    const [first] = signed.headers;
    const r = await send(source, { ...signed, headers: [...signed.headers, first!] });
    expect(r.status, r.text).toBe(401);
    expect(r.json.error.message).toContain('duplicate_header');
  });

  it('deduplicates: the same request again gets 200 with the first message ID and costs nothing', async () => {
    const source = await createSource(kind);
    const body = SIGNERS[kind]!.body(4);
    const signed = await signFor(kind, source.secret, body, nowSeconds(), source.receiveUrl);
    const first = await send(source, signed);
    expect(first.status, first.text).toBe(200);
    const charges = async () =>
      (await h.services.db.query('SELECT count(*)::int AS n FROM charges WHERE team_id = $1', [h.team.teamId]))[0].n;
    const before = await charges();
    h.clock.advance(10 * SECOND);
    const again = await send(source, await signFor(kind, source.secret, body, nowSeconds(), source.receiveUrl));
    expect(again.status, again.text).toBe(200);
    expect(await charges()).toBe(before);
    const stored = await h.services.db.query('SELECT id FROM messages WHERE source_id = $1', [source.id]);
    expect(stored).toHaveLength(1);
    if (kind !== 'chat' && kind !== 'telephony')
      expect(JSON.parse(again.text)).toEqual({ message_id: stored[0].id, duplicate: true });
  });

  it('verifies the old and the new secret during the overlap of a rotation, only the new one after', async () => {
    const source = await createSource(kind);
    const generated = SIGNERS[kind]!.secret === null;
    const newSecret = generated ? undefined : `${SIGNERS[kind]!.secret}-rotated`;
    const rotated = await post(
      h,
      `/sources/${source.id}/rotate_secret`,
      {
        overlap_seconds: 600,
        ...(newSecret ? { secret: kind === 'payments' ? 'whsec_rotated_payments_secret_987' : newSecret } : {}),
      },
      { ifMatch: source.etag },
    );
    expect(rotated.status, rotated.text).toBe(200);
    const fresh = generated
      ? rotated.json.secret
      : kind === 'payments'
        ? 'whsec_rotated_payments_secret_987'
        : newSecret!;
    expect(rotated.json.secret_rotation_ends_at).toBe(new Date(h.clock.now().getTime() + 600 * SECOND).toISOString());
    const viaOld = await send(
      source,
      await signFor(kind, source.secret, SIGNERS[kind]!.body(5), nowSeconds(), source.receiveUrl),
    );
    expect(viaOld.status, viaOld.text).toBe(200);
    const viaNew = await send(
      source,
      await signFor(kind, fresh, SIGNERS[kind]!.body(6), nowSeconds(), source.receiveUrl),
    );
    expect(viaNew.status, viaNew.text).toBe(200);
    h.clock.advance(601 * SECOND);
    const oldAfter = await send(
      source,
      await signFor(kind, source.secret, SIGNERS[kind]!.body(7), nowSeconds(), source.receiveUrl),
    );
    expect(oldAfter.status).toBe(401);
    const newAfter = await send(
      source,
      await signFor(kind, fresh, SIGNERS[kind]!.body(8), nowSeconds(), source.receiveUrl),
    );
    expect(newAfter.status, newAfter.text).toBe(200);
  });

  if (['standard_webhooks', 'hmac', 'payments', 'chat'].includes(kind))
    it('refuses a stale timestamp (over 300 seconds old or ahead)', async () => {
      const source = await createSource(kind);
      const old = await send(
        source,
        await signFor(kind, source.secret, SIGNERS[kind]!.body(9), nowSeconds() - 301, source.receiveUrl),
      );
      expect(old.status).toBe(401);
      expect(old.json.error.message).toContain('stale_timestamp');
      const ahead = await send(
        source,
        await signFor(kind, source.secret, SIGNERS[kind]!.body(10), nowSeconds() + 301, source.receiveUrl),
      );
      expect(ahead.status).toBe(401);
      const within = await send(
        source,
        await signFor(kind, source.secret, SIGNERS[kind]!.body(11), nowSeconds() - 290, source.receiveUrl),
      );
      expect(within.status, within.text).toBe(200);
    });
});

describe('a burst of rejections', () => {
  it('folds per reason, so each request is counted under the reason it was refused for', async () => {
    const source = await createSource('standard_webhooks');
    const body = SIGNERS['standard_webhooks']!.body(7);
    const signed = await signFor('standard_webhooks', source.secret, body, nowSeconds(), source.receiveUrl);
    const wrongSecret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const bad = await signFor('standard_webhooks', wrongSecret, body, nowSeconds(), source.receiveUrl);
    // Within one minute: bad, bad, missing, bad. One event per reason, each with its own count.
    for (const request of [bad, bad, { ...signed, headers: [] }, bad]) {
      const refused = await send(source, request);
      expect(refused.status, refused.text).toBe(401);
      h.clock.advance(1_000);
    }
    const events = await rejections(source.id, 4);
    expect(events.map((e) => [e['reason'], e['count']]).sort()).toEqual([
      ['bad_signature', 3],
      ['missing_signature', 1],
    ]);
  });
});

describe('the receive URL', () => {
  it('answers 404 for an unknown token, a rotated-out one after its overlap, and a deleted source', async () => {
    const unknown = await h.request('POST', '/receive/rcv_unknown', {
      key: null,
      raw: true,
      body: '{}',
      headers: { 'content-type': json },
    });
    expect(unknown.status).toBe(404);
    const source = await createSource('bearer');
    const rotated = await post(
      h,
      `/sources/${source.id}/rotate_token`,
      { overlap_seconds: 60 },
      { ifMatch: source.etag },
    );
    expect(rotated.status, rotated.text).toBe(200);
    const next = { token: (rotated.json.receive_url as string).split('/').at(-1)! };
    const request = (n: number) => SIGNERS['bearer']!.sign(source.secret, JSON.stringify({ n }), 0, '');
    expect((await send(source, request(1))).status).toBe(200);
    expect((await send(next, request(2))).status).toBe(200);
    h.clock.advance(61 * SECOND);
    expect((await send(source, request(3))).status).toBe(404);
    expect((await send(next, request(4))).status).toBe(200);
    const current = await h.request('GET', `/sources/${source.id}`);
    expect(current.json).not.toHaveProperty('receive_url');
    expect(current.text).not.toContain(next.token);
    const deleted = await h.request('DELETE', `/sources/${source.id}`, { ifMatch: current.headers.get('etag')! });
    expect(deleted.status).toBe(204);
    expect((await send(next, request(5))).status).toBe(404);
  });

  it('answers a paused source with 503 and Retry-After, so the provider sends again later', async () => {
    const source = await createSource('bearer');
    const paused = await h.request('PATCH', `/sources/${source.id}`, {
      body: { status: 'paused' },
      ifMatch: source.etag,
    });
    expect(paused.status, paused.text).toBe(200);
    const r = await send(source, SIGNERS['bearer']!.sign(source.secret, '{"p":1}', 0, ''));
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('60');
  });
});
