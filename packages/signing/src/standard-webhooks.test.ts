import { createHmac, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { decodeSecret, generateKeyPair, generateSecret, publicKeyOf, signPayload } from './standard-webhooks.js';
import { verifyV1aAsSpecSays } from './testing/v1a-verifier.js';

const now = () => Math.floor(Date.now() / 1000);

function headersFor(msgId: string, timestamp: number, signature: string): Record<string, string> {
  return { 'webhook-id': msgId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

/** What a receiver that follows the spec by hand computes: HMAC over the raw bytes. */
function referenceSignature(secret: string, msgId: string, timestamp: number, body: Buffer): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const mac = createHmac('sha256', key);
  mac.update(Buffer.concat([Buffer.from(`${msgId}.${timestamp}.`), body]));
  return `v1,${mac.digest('base64')}`;
}

describe('signPayload', () => {
  it('produces a signature the official standardwebhooks library verifies', () => {
    const secret = generateSecret();
    const body = Buffer.from('{"type":"invoice.paid","amount":1.50e2}');
    const timestamp = now();
    const signature = signPayload({ msgId: 'wdm_1', timestamp, body, secrets: [secret] });

    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, headersFor('wdm_1', timestamp, signature))).toEqual({
      type: 'invoice.paid',
      amount: 150,
    });
  });

  it('signs once per secret during a rotation overlap, and receivers holding either secret verify', () => {
    const [current, previous] = [generateSecret(), generateSecret()];
    const body = Buffer.from('{"n":1}');
    const timestamp = now();
    const signature = signPayload({ msgId: 'wdm_2', timestamp, body, secrets: [current, previous] });

    const parts = signature.split(' ');
    expect(parts).toHaveLength(2);
    expect(parts[0]).toBe(signPayload({ msgId: 'wdm_2', timestamp, body, secrets: [current] }));
    expect(parts[1]).toBe(signPayload({ msgId: 'wdm_2', timestamp, body, secrets: [previous] }));
    for (const secret of [current, previous]) {
      expect(() => new Webhook(secret).verify(body, headersFor('wdm_2', timestamp, signature))).not.toThrow();
    }
    expect(() => new Webhook(generateSecret()).verify(body, headersFor('wdm_2', timestamp, signature))).toThrow(
      WebhookVerificationError,
    );
  });

  it('signs non-ASCII bodies over their UTF-8 bytes', () => {
    const secret = generateSecret();
    const body = Buffer.from('{"name":"Zoë ✓ 日本語 🎉","escaped":"\\u00e9"}', 'utf8');
    const timestamp = now();
    const signature = signPayload({ msgId: 'wdm_3', timestamp, body, secrets: [secret] });

    expect(signature).toBe(referenceSignature(secret, 'wdm_3', timestamp, body));
    expect(new Webhook(secret).verify(body, headersFor('wdm_3', timestamp, signature))).toMatchObject({
      name: 'Zoë ✓ 日本語 🎉',
    });
  });

  it('signs binary bodies over their exact bytes', () => {
    const secret = generateSecret();
    const timestamp = now();
    // Valid UTF-8 with NUL and control bytes: the library round-trips it, so it verifies.
    const controls = Buffer.from([0x00, 0x01, 0x7f, 0x0a, 0x41, 0xc3, 0xa9]);
    const controlsSignature = signPayload({ msgId: 'wdm_4', timestamp, body: controls, secrets: [secret] });
    expect(() =>
      new Webhook(secret).verify(controls, headersFor('wdm_4', timestamp, controlsSignature), { jsonParse: false }),
    ).not.toThrow();

    // Not UTF-8 (an application/octet-stream body): the signature covers the raw bytes, as the spec says.
    // The JavaScript library decodes Buffers as UTF-8 before hashing (invalid bytes become U+FFFD), so it cannot
    // verify such a body; a receiver hashing the bytes can, and two bodies that decode alike sign differently.
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x9f]);
    const lookalike = Buffer.from([0xfe, 0xff, 0x00, 0x80, 0xc3, 0x28, 0x9f]);
    const signature = signPayload({ msgId: 'wdm_5', timestamp, body: binary, secrets: [secret] });
    expect(signature).toBe(referenceSignature(secret, 'wdm_5', timestamp, binary));
    expect(signature).not.toBe(signPayload({ msgId: 'wdm_5', timestamp, body: lookalike, secrets: [secret] }));
  });

  it('agrees with the library signer byte for byte', () => {
    const secret = generateSecret();
    const body = Buffer.from('{"ok":true}');
    const timestamp = 1_700_000_000;
    expect(signPayload({ msgId: 'wdm_6', timestamp, body, secrets: [secret] })).toBe(
      new Webhook(secret).sign('wdm_6', new Date(timestamp * 1000), body),
    );
  });

  it('signs an empty body', () => {
    const secret = generateSecret();
    const timestamp = now();
    const body = Buffer.alloc(0);
    const signature = signPayload({ msgId: 'wdm_7', timestamp, body, secrets: [secret] });
    expect(() => new Webhook(secret).verify(body, headersFor('wdm_7', timestamp, signature))).not.toThrow();
  });

  it('refuses no secrets, malformed secrets and bad timestamps instead of signing with a wrong key', () => {
    const body = Buffer.from('{}');
    const base = { msgId: 'wdm_8', timestamp: now(), body };
    expect(() => signPayload({ ...base, secrets: [] })).toThrow('at least one');
    expect(() => signPayload({ ...base, secrets: ['c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0'] })).toThrow('whsec_');
    expect(() => signPayload({ ...base, secrets: ['whsec_not base64!'] })).toThrow('Base64');
    expect(() => signPayload({ ...base, secrets: ['whsec_c2hvcnQ='] })).toThrow('24 to 64 bytes');
    expect(() => signPayload({ ...base, timestamp: 1.5, secrets: [generateSecret()] })).toThrow('timestamp');
    expect(() => signPayload({ ...base, msgId: '', secrets: [generateSecret()] })).toThrow('webhook-id');
  });
});

describe('generateSecret', () => {
  it('makes distinct whsec_ secrets of 32 random bytes', () => {
    const secrets = new Set(Array.from({ length: 50 }, generateSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(decodeSecret(secret)).toHaveLength(32);
    }
  });
});

describe('ed25519 (v1a)', () => {
  // RFC 8032, section 7.1, TEST 1: the seed and the public key it must give.
  const RFC_SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
  const RFC_PUBLIC = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');

  it('keys are whsk_ and whpk_ with standard Base64 of the 32-byte seed and the 32-byte public key (RFC 8032)', () => {
    expect(publicKeyOf(`whsk_${RFC_SEED.toString('base64')}`)).toBe(`whpk_${RFC_PUBLIC.toString('base64')}`);
    const pair = generateKeyPair();
    expect(pair.secretKey).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
    expect(pair.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(publicKeyOf(pair.secretKey)).toBe(pair.publicKey);
  });

  it("signs v1a over the exact bytes; Node's verify with the public key alone and a receiver written from the spec accept it", () => {
    const pair = generateKeyPair();
    const body = Buffer.from('{"amount":1.50e2,"note":"caf\u00e9"}');
    const timestamp = now();
    const signature = signPayload({ msgId: 'wdm_ed', timestamp, body, secrets: [pair.secretKey] });
    expect(signature).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);

    const spki = Buffer.concat([
      Buffer.from('302a300506032b6570032100', 'hex'),
      Buffer.from(pair.publicKey.slice(5), 'base64'),
    ]);
    const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
    const content = Buffer.concat([Buffer.from(`wdm_ed.${timestamp}.`), body]);
    expect(cryptoVerify(null, content, key, Buffer.from(signature.slice(4), 'base64'))).toBe(true);

    const headers = headersFor('wdm_ed', timestamp, signature) as Parameters<typeof verifyV1aAsSpecSays>[1];
    expect(verifyV1aAsSpecSays(pair.publicKey, headers, body, now())).toBe(true);
    // A tampered body, another key, another webhook-id: refused.
    expect(verifyV1aAsSpecSays(pair.publicKey, headers, Buffer.from('{"amount":150,"note":"caf\u00e9"}'), now())).toBe(
      false,
    );
    expect(verifyV1aAsSpecSays(generateKeyPair().publicKey, headers, body, now())).toBe(false);
    expect(verifyV1aAsSpecSays(pair.publicKey, { ...headers, 'webhook-id': 'wdm_other' }, body, now())).toBe(false);
  });

  it('a rotation overlap, also across schemes, carries one signature per key and each receiver verifies its own', () => {
    const [next, previous] = [generateKeyPair(), generateKeyPair()];
    const hmac = generateSecret();
    const body = Buffer.from('{"n":2}');
    const timestamp = now();
    const signature = signPayload({
      msgId: 'wdm_rot',
      timestamp,
      body,
      secrets: [next.secretKey, previous.secretKey, hmac],
    });
    const parts = signature.split(' ');
    expect(parts.map((part) => part.split(',')[0])).toEqual(['v1a', 'v1a', 'v1']);
    const headers = headersFor('wdm_rot', timestamp, signature) as Parameters<typeof verifyV1aAsSpecSays>[1];
    expect(verifyV1aAsSpecSays(next.publicKey, headers, body, now())).toBe(true);
    expect(verifyV1aAsSpecSays(previous.publicKey, headers, body, now())).toBe(true);
    // The HMAC receiver, with the official library, still verifies its v1 among them.
    expect(() => new Webhook(hmac).verify(body, headers)).not.toThrow();
  });

  it('refuses a malformed secret key rather than signing with another one', () => {
    for (const bad of ['whsk_', 'whsk_AAAA', `whsk_${Buffer.alloc(31).toString('base64')}`, 'whsk_!!!!'])
      expect(() => signPayload({ msgId: 'm', timestamp: 1, body: Buffer.from('x'), secrets: [bad] })).toThrow();
  });
});
