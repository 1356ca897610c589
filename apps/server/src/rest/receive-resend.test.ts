import { createHmac } from 'node:crypto';
import { sign as signCodehost } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, type ApiResponse, type Harness } from '../testing/harness.js';
import { rawPost } from '../testing/raw-post.js';

/**
 * A captured request resent under a fresh event ID (docs/sources.md, Deduplication). Where the event ID is a header
 * the signature does not cover (codehost, commerce, telephony, hmac with event_id_header), anyone holding one real
 * request can resend it under a new ID: the same body within 24 hours is a duplicate too, answered with the first
 * message's ID and not charged. Where the signature covers the ID and a timestamp (standard_webhooks, payments,
 * chat), a new ID needs the provider's secret, and captures are deduplicated by ID only. Signatures come from the
 * providers' libraries (as in receive.test.ts); on the machine's clock, so signed timestamps are real ones.
 */
const PUBLIC_BASE = 'https://hooks.svc.test';
let h: Harness;
let tenantId: string;

beforeAll(async () => {
  h = await startHarness({ publicBaseUrl: PUBLIC_BASE, realClock: true });
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'resend', name: 'Resend' })).json.id;
  await post(h, '/event_types', { name: 'resend.event' });
});
afterAll(async () => {
  await h.close();
});

interface Source {
  id: string;
  token: string;
  receiveUrl: string;
  secret: string;
}

async function createSource(verification: Record<string, unknown>): Promise<Source> {
  const r = await post(h, '/sources', {
    tenant_id: tenantId,
    name: `${verification['kind']} source`,
    verification,
    event_type: 'resend.event',
  });
  expect(r.status, r.text).toBe(201);
  const receiveUrl: string = r.json.receive_url;
  return {
    id: r.json.id,
    token: receiveUrl.slice(`${PUBLIC_BASE}/v1/receive/`.length),
    receiveUrl,
    secret: (verification['secret'] as string | undefined) ?? r.json.secret,
  };
}

function send(source: Source, body: string, contentType: string, headers: Record<string, string>) {
  return rawPost(`${h.baseUrl}/receive/${source.token}`, body, { 'content-type': contentType, ...headers });
}

async function charges(): Promise<number> {
  const [row] = await h.services.db.query('SELECT count(*)::int AS n FROM charges WHERE team_id = $1', [h.team.teamId]);
  return row.n;
}

async function messagesOf(source: Source): Promise<string[]> {
  const rows: { id: string }[] = await h.services.db.query(
    'SELECT id FROM messages WHERE source_id = $1 ORDER BY created_at, id',
    [source.id],
  );
  return rows.map((row) => row.id);
}

/** The message ID a capture answered: from the JSON answer, or (telephony's TwiML) the source's newest message. */
async function answeredId(source: Source, answer: ApiResponse): Promise<string> {
  if (answer.json !== null) return answer.json.message_id;
  return (await messagesOf(source)).at(-1)!;
}

const json = 'application/json';
const form = 'application/x-www-form-urlencoded';
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface UnsignedIdCase {
  verification: Record<string, unknown>;
  contentType: string;
  body: string;
  /** The signed request's headers, without the event ID header. */
  sign(source: Source, body: string): Promise<Record<string, string>>;
  idHeader: string;
}

const secret = 'resend-provider-secret-1';
const UNSIGNED_ID: Record<string, UnsignedIdCase> = {
  codehost: {
    verification: { kind: 'codehost', secret },
    contentType: json,
    body: JSON.stringify({ ref: 'refs/heads/main', after: 'abc123' }),
    sign: async (source, body) => ({
      'x-hub-signature-256': await signCodehost(source.secret, body),
      'x-github-event': 'push',
    }),
    idHeader: 'x-github-delivery',
  },
  'commerce (X-Shopify-Webhook-Id)': {
    verification: { kind: 'commerce', secret },
    contentType: json,
    body: JSON.stringify({ id: 820982911946154500, email: 'jon@example.com' }),
    sign: async (source, body) => ({
      'x-shopify-hmac-sha256': createHmac('sha256', source.secret).update(body).digest('base64'),
      'x-shopify-topic': 'orders/create',
    }),
    idHeader: 'x-shopify-webhook-id',
  },
  'commerce (X-Shopify-Event-Id)': {
    verification: { kind: 'commerce', secret },
    contentType: json,
    body: JSON.stringify({ id: 820982911946154600, email: 'ann@example.com' }),
    sign: async (source, body) => ({
      'x-shopify-hmac-sha256': createHmac('sha256', source.secret).update(body).digest('base64'),
      'x-shopify-topic': 'orders/create',
    }),
    idHeader: 'x-shopify-event-id',
  },
  telephony: {
    verification: { kind: 'telephony', secret: 'twilio_auth_token_resend_0123' },
    contentType: form,
    body: new URLSearchParams({ CallSid: 'CA0001', From: '+15551230000', To: '+15559870000' }).toString(),
    sign: async (source, body) => ({
      'x-twilio-signature': twilio.getExpectedTwilioSignature(
        source.secret,
        source.receiveUrl,
        Object.fromEntries(new URLSearchParams(body)),
      ),
    }),
    idHeader: 'i-twilio-idempotency-token',
  },
  'hmac with event_id_header and a signed timestamp': {
    verification: {
      kind: 'hmac',
      secret,
      header: 'x-acme-signature',
      prefix: 'sha256=',
      timestamp_header: 'x-acme-timestamp',
      signed_content: '{timestamp}.{body}',
      event_id_header: 'x-acme-delivery',
    },
    contentType: json,
    body: JSON.stringify({ kind: 'acme', n: 1 }),
    sign: async (source, body) => {
      const at = String(nowSeconds());
      return {
        'x-acme-signature': `sha256=${createHmac('sha256', source.secret).update(`${at}.${body}`).digest('hex')}`,
        'x-acme-timestamp': at,
      };
    },
    idHeader: 'x-acme-delivery',
  },
};

describe.each(Object.keys(UNSIGNED_ID))('%s: the event ID is outside the signature', (name) => {
  const kind = UNSIGNED_ID[name]!;

  it('a captured request resent under a fresh ID is a duplicate of the first capture, not charged', async () => {
    const source = await createSource(kind.verification);
    const signed = await kind.sign(source, kind.body);
    const first = await send(source, kind.body, kind.contentType, { ...signed, [kind.idHeader]: 'first-id-1' });
    expect(first.status, first.text).toBe(200);
    const firstId = await answeredId(source, first);
    const before = await charges();
    // The captured request exactly as it was, under new IDs, one after another and then several at once.
    const resent = [await send(source, kind.body, kind.contentType, { ...signed, [kind.idHeader]: 'forged-id-2' })];
    resent.push(
      ...(await Promise.all(
        ['forged-id-3', 'forged-id-4', 'forged-id-2'].map((id) =>
          send(source, kind.body, kind.contentType, { ...signed, [kind.idHeader]: id }),
        ),
      )),
    );
    for (const answer of resent) {
      expect(answer.status, answer.text).toBe(200);
      if (answer.json !== null) expect(answer.json).toEqual({ message_id: firstId, duplicate: true });
    }
    expect(await messagesOf(source)).toEqual([firstId]);
    expect(await charges()).toBe(before);
    // The provider's own redelivery (same ID, same body) stays a duplicate; another body under a new ID is captured.
    const redelivered = await send(source, kind.body, kind.contentType, { ...signed, [kind.idHeader]: 'first-id-1' });
    expect(redelivered.status).toBe(200);
    const otherBody = kind.contentType === form ? `${kind.body}&Digits=1` : kind.body.replace('}', ',"more":1}');
    const other = await send(source, otherBody, kind.contentType, {
      ...(await kind.sign(source, otherBody)),
      [kind.idHeader]: 'next-id-5',
    });
    expect(other.status, other.text).toBe(200);
    expect(await messagesOf(source)).toHaveLength(2);
    expect(await charges()).toBeGreaterThan(before);
    // The body is remembered for 24 hours, the ID for 35 days.
    const keys: { kind: string; hours: number }[] = await h.services.db.query(
      `SELECT split_part(event_key, ':', 1) AS kind,
              round(extract(epoch FROM expires_at - now()) / 3600)::int AS hours
         FROM source_event_ids WHERE message_id = $1 ORDER BY 1`,
      [firstId],
    );
    expect(keys).toEqual([
      { kind: 'body', hours: 24 },
      { kind: 'id', hours: 35 * 24 },
    ]);
  });
});

describe('kinds whose signature covers the event ID and a timestamp: deduplicated by ID only', () => {
  it('standard_webhooks: the same body under a new signed webhook-id is a new message', async () => {
    const source = await createSource({ kind: 'standard_webhooks' });
    const body = JSON.stringify({ type: 'resend.event', n: 1 });
    const signed = (id: string) => ({
      'webhook-id': id,
      'webhook-timestamp': String(nowSeconds()),
      'webhook-signature': new Webhook(source.secret).sign(id, new Date(nowSeconds() * 1000), body),
    });
    const first = signed('msg_first');
    expect((await send(source, body, json, first)).json.duplicate).toBe(false);
    expect((await send(source, body, json, first)).json.duplicate).toBe(true);
    expect((await send(source, body, json, signed('msg_second'))).json.duplicate).toBe(false);
    expect(await messagesOf(source)).toHaveLength(2);
  });

  it('payments and chat: the ID is in the signed body, so the same body is the same event', async () => {
    const payments = await createSource({ kind: 'payments', secret: 'whsec_resend_payments_secret_0123' });
    const paymentBody = JSON.stringify({ id: 'evt_resend_1', object: 'event', type: 'resend.event' });
    const stripeHeader = () =>
      Stripe.webhooks.generateTestHeaderString({
        payload: paymentBody,
        secret: payments.secret,
        timestamp: nowSeconds(),
      });
    expect((await send(payments, paymentBody, json, { 'stripe-signature': stripeHeader() })).json.duplicate).toBe(
      false,
    );
    expect((await send(payments, paymentBody, json, { 'stripe-signature': stripeHeader() })).json.duplicate).toBe(true);
    const chat = await createSource({ kind: 'chat', secret: '8f742231b10e8888abcd99yyyzzz85a5' });
    const chatBody = (eventId: string) =>
      JSON.stringify({ type: 'event_callback', event_id: eventId, event: { type: 'message' } });
    const slack = (body: string) => {
      const at = String(nowSeconds());
      return {
        'x-slack-signature': `v0=${createHmac('sha256', chat.secret).update(`v0:${at}:${body}`).digest('hex')}`,
        'x-slack-request-timestamp': at,
      };
    };
    for (const eventId of ['Ev1', 'Ev1', 'Ev2'])
      expect((await send(chat, chatBody(eventId), json, slack(chatBody(eventId)))).status).toBe(200);
    expect(await messagesOf(payments)).toHaveLength(1);
    expect(await messagesOf(chat)).toHaveLength(2);
    // Only the ID is remembered for these kinds.
    const keys: { event_key: string }[] = await h.services.db.query(
      `SELECT event_key FROM source_event_ids WHERE source_id = ANY($1) ORDER BY 1`,
      [[payments.id, chat.id]],
    );
    expect(keys.map((k) => k.event_key)).toEqual(['id:Ev1', 'id:Ev2', 'id:evt_resend_1']);
  });
});
