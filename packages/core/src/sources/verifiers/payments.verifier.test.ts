import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { paymentsVerifier as verifier } from './payments.verifier.js';
import { reject } from './verifier.js';
import { inbound, itBehavesLikeAVerifier, NOW, NOW_SECONDS } from './verifier-test-support.js';

// The client only signs test headers here; it never calls the network.
const stripe = new Stripe('sk_test_verifier_tests');

const secrets = {
  current: 'whsec_f3a1c0d9e8b7a6958473625140aa1b2c',
  previous: 'whsec_0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e',
  unrelated: 'whsec_99999999999999999999999999999999',
};

const EVENT = '{\n  "id": "evt_1QxYz2AbCdEf",\n  "object": "event",\n  "type": "invoice.paid"\n}';

/** A Stripe-Signature header made by the official `stripe` library. */
function header(secret: string, body: Buffer | string, timestamp: number): string {
  return stripe.webhooks.generateTestHeaderString({ payload: body.toString(), secret, timestamp });
}

const signed = (secret: string, body: Buffer | string, timestamp: number) =>
  inbound(body, [
    ['Content-Type', 'application/json; charset=utf-8'],
    ['Stripe-Signature', header(secret, body, timestamp)],
  ]);

const verify = (request: ReturnType<typeof inbound>, active = [secrets.current]) =>
  verifier.verify(request, {}, active, NOW);

describe('payments verifier (Stripe scheme)', () => {
  itBehavesLikeAVerifier({
    verifier,
    settings: {},
    secrets,
    sign: signed,
    body: EVENT,
    tamperedBody: EVENT.replace('invoice.paid', 'invoice.voided'),
    eventId: 'evt_1QxYz2AbCdEf',
    requiredHeaders: ['Stripe-Signature'],
    onceOnlyHeaders: ['Stripe-Signature'],
    timestamped: true,
  });

  it('accepts what the official library accepts', () => {
    const stripeSignature = header(secrets.current, EVENT, NOW_SECONDS);
    const request = inbound(EVENT, [['Stripe-Signature', stripeSignature]]);
    expect(verify(request).ok).toBe(true);
    const event = stripe.webhooks.constructEvent(
      request.rawBody,
      stripeSignature,
      secrets.current,
      300,
      undefined,
      NOW.getTime(),
    );
    expect(event.id).toBe('evt_1QxYz2AbCdEf');
  });

  it('accepts any of several v1 signatures and ignores other schemes such as v0', () => {
    const good = header(secrets.previous, EVENT, NOW_SECONDS).split(',')[1]!;
    const bad = header(secrets.unrelated, EVENT, NOW_SECONDS).split(',')[1]!;
    const value = `t=${NOW_SECONDS},v0=${'0'.repeat(64)},${bad},${good}`;
    const request = inbound(EVENT, [['Stripe-Signature', value]]);
    expect(verify(request, [secrets.previous])).toEqual({ ok: true, eventId: 'evt_1QxYz2AbCdEf' });
    // A v0 signature alone proves nothing.
    const v0Only = inbound(EVENT, [['Stripe-Signature', `t=${NOW_SECONDS},v0=${good.slice(3)}`]]);
    expect(verify(v0Only, [secrets.previous])).toEqual(reject('malformed_signature'));
  });

  it.each([
    ['no timestamp', `v1=${'a'.repeat(64)}`],
    ['two timestamps', `t=${NOW_SECONDS},t=${NOW_SECONDS},v1=${'a'.repeat(64)}`],
    ['a timestamp that is not digits', `t=soon,v1=${'a'.repeat(64)}`],
    ['a v1 that is not hex', `t=${NOW_SECONDS},v1=zz`],
    ['garbage', 'hello'],
  ])('refuses a header with %s as malformed_signature', (_name, value) => {
    expect(verify(inbound(EVENT, [['Stripe-Signature', value]]))).toEqual(reject('malformed_signature'));
  });

  it.each([
    ['not JSON', 'id=evt_1'],
    ['JSON without an id', '{"object":"event"}'],
    ['an id that is not a string', '{"id":42}'],
    ['a JSON array', '[{"id":"evt_1"}]'],
    ['duplicate id keys', '{"id":"evt_1","id":"evt_2"}'],
  ])('refuses a verified body that is %s as malformed_body', (_name, body) => {
    expect(verify(signed(secrets.current, body, NOW_SECONDS))).toEqual(reject('malformed_body'));
  });

  it('keys the HMAC by the whole whsec_ string, not its decoded form', () => {
    const decodedKey = Buffer.from(secrets.current.slice('whsec_'.length), 'base64').toString('latin1');
    const request = signed(decodedKey, EVENT, NOW_SECONDS);
    expect(verify(request)).toEqual(reject('bad_signature'));
  });

  it('checks the secret is an endpoint signing secret', () => {
    expect(verifier.generateSecret()).toBeNull();
    expect(verifier.checkSecret(secrets.current)).toBeNull();
    expect(verifier.checkSecret('sk_live_51Habc')).toMatch(/whsec_/);
    expect(verifier.checkSecret('whsec_')).not.toBeNull();
    expect(verifier.checkSecret(`${secrets.current} `)).toMatch(/whitespace/);
  });

  it('answers with the message ID as JSON', () => {
    expect(JSON.parse(verifier.accepted('msg_1', false).body)).toEqual({ message_id: 'msg_1', duplicate: false });
  });
});
