import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { standardWebhooksVerifier as verifier } from './standard-webhooks.verifier.js';
import { reject } from './verifier.js';
import { inbound, itBehavesLikeAVerifier, NOW, NOW_SECONDS } from './verifier-test-support.js';

const secrets = {
  current: verifier.generateSecret(),
  previous: verifier.generateSecret(),
  unrelated: verifier.generateSecret(),
};

function headers(id: string, timestamp: number | string, signature: string): [string, string][] {
  return [
    ['Content-Type', 'application/json'],
    ['webhook-id', id],
    ['webhook-timestamp', String(timestamp)],
    ['webhook-signature', signature],
  ];
}

/** The webhook-signature value the official `standardwebhooks` library makes. */
function signatureBy(secret: string, body: Buffer | string, timestamp: number, id: string): string {
  return new Webhook(secret).sign(id, new Date(timestamp * 1000), body.toString());
}

function signed(secret: string, body: Buffer | string, timestamp: number, id = 'msg_2mXbDq7Kt1') {
  return inbound(body, headers(id, timestamp, signatureBy(secret, body, timestamp, id)));
}

describe('standard_webhooks verifier', () => {
  itBehavesLikeAVerifier({
    verifier,
    settings: {},
    secrets,
    sign: signed,
    body: '{"type":"invoice.paid","amount":150}',
    tamperedBody: '{"type":"invoice.paid","amount":15000}',
    eventId: 'msg_2mXbDq7Kt1',
    requiredHeaders: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    onceOnlyHeaders: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    timestamped: true,
  });

  it('verifies the example of the Standard Webhooks reference libraries', () => {
    const request = inbound(
      '{"test": 2432232314}',
      headers('msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='),
    );
    const result = verifier.verify(request, {}, ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], new Date(1614265330_000));
    expect(result).toEqual({ ok: true, eventId: 'msg_p5jXN8AQM9LWM0D4loKWxJek' });
  });

  it('accepts a list where any v1 signature matches, skipping other versions and junk', () => {
    const good = signatureBy(secrets.current, '{"n":1}', NOW_SECONDS, 'msg_1');
    const list = `v1a,aGVsbG8= v1,${Buffer.alloc(32).toString('base64')} v1,not-base64 ${good}`;
    expect(
      verifier.verify(inbound('{"n":1}', headers('msg_1', NOW_SECONDS, list)), {}, [secrets.current], NOW),
    ).toEqual({
      ok: true,
      eventId: 'msg_1',
    });
  });

  it('verifies a sender that signs once per secret during its own rotation', () => {
    const both = [secrets.previous, secrets.unrelated].map((secret) => signatureBy(secret, '{}', NOW_SECONDS, 'msg_3'));
    const request = inbound('{}', headers('msg_3', NOW_SECONDS, both.join(' ')));
    expect(verifier.verify(request, {}, [secrets.unrelated], NOW).ok).toBe(true);
    expect(verifier.verify(request, {}, [secrets.current], NOW)).toEqual(reject('bad_signature'));
  });

  it('signs over the exact bytes of a non-UTF-8 body', () => {
    // The JavaScript library decodes Buffers as UTF-8 before signing, so the reference here is node:crypto.
    const body = Buffer.from([0xff, 0xfe, 0x00, 0x80]);
    const key = Buffer.from(secrets.current.slice('whsec_'.length), 'base64');
    const mac = createHmac('sha256', key).update(`msg_b.${NOW_SECONDS}.`).update(body).digest('base64');
    const request = inbound(body, headers('msg_b', NOW_SECONDS, `v1,${mac}`));
    expect(verifier.verify(request, {}, [secrets.current], NOW).ok).toBe(true);
  });

  it.each([
    ['a timestamp that is not digits', headers('msg_1', '17e8', 'v1,AAAA')],
    ['no v1 signature', headers('msg_1', NOW_SECONDS, 'v1a,AAAA v2,AAAA')],
    ['a v1 signature that is not Base64', headers('msg_1', NOW_SECONDS, 'v1,***')],
  ])('refuses %s as malformed_signature', (_name, list) => {
    expect(verifier.verify(inbound('{}', list), {}, [secrets.current], NOW)).toEqual(reject('malformed_signature'));
  });

  it('generates whsec_ secrets of 32 random bytes and checks the ones operators bring', () => {
    expect(secrets.current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(verifier.checkSecret(secrets.current)).toBeNull();
    expect(verifier.checkSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBeNull();
    expect(verifier.checkSecret('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toMatch(/whsec_/);
    expect(verifier.checkSecret('whsec_c2hvcnQ=')).toMatch(/24 to 64 bytes/);
    expect(verifier.checkSecret('whsec_not base64!')).not.toBeNull();
  });

  it('answers with the message ID as JSON', () => {
    expect(verifier.accepted('msg_1', false)).toEqual({
      status: 200,
      contentType: 'application/json',
      body: '{"message_id":"msg_1","duplicate":false}',
    });
  });
});
