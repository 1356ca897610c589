import { describe, expect, it } from 'vitest';
import { decodeSvcSecret, generateSvcSecret, signSvcSignature } from './svc-signature.js';
import { verifyAsSpecSays } from './testing/spec-verifier.js';

const now = () => Math.floor(Date.now() / 1000);

describe('Svc-Signature', () => {
  it('makes whsec_ secrets whose rest is base64url of 32 bytes', () => {
    const secret = generateSvcSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(decodeSvcSecret(secret)).toHaveLength(32);
  });

  it('signs the exact bytes so that a receiver following the spec accepts, and rejects any change', () => {
    const secret = generateSvcSecret();
    const body = Buffer.from('{"id":"evt_1","revision":"7","data":{"n":1.50e2}}');
    const t = now();
    const header = signSvcSignature({ timestamp: t, body, secrets: [secret] });
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyAsSpecSays(secret, header, body, t)).toBe(true);
    expect(verifyAsSpecSays(secret, header, Buffer.from(body.toString().replace('1.50e2', '150')), t)).toBe(false);
    expect(verifyAsSpecSays(generateSvcSecret(), header, body, t)).toBe(false);
  });

  it('carries one v1 per active secret, each accepted on its own', () => {
    const [current, previous] = [generateSvcSecret(), generateSvcSecret()];
    const body = Buffer.from('{}');
    const t = now();
    const header = signSvcSignature({ timestamp: t, body, secrets: [current, previous] });
    expect(header.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(2);
    expect(verifyAsSpecSays(current, header, body, t)).toBe(true);
    expect(verifyAsSpecSays(previous, header, body, t)).toBe(true);
  });

  it('is refused more than 300 seconds from the receiver clock, accepted at exactly 300', () => {
    const secret = generateSvcSecret();
    const body = Buffer.from('{}');
    const t = now();
    const header = signSvcSignature({ timestamp: t, body, secrets: [secret] });
    expect(verifyAsSpecSays(secret, header, body, t + 300)).toBe(true);
    expect(verifyAsSpecSays(secret, header, body, t - 300)).toBe(true);
    expect(verifyAsSpecSays(secret, header, body, t + 301)).toBe(false);
  });

  it('refuses secrets it did not make', () => {
    expect(() => decodeSvcSecret('whsec_abc+/=')).toThrow();
    expect(() => decodeSvcSecret('sk_abc')).toThrow();
    expect(() => signSvcSignature({ timestamp: 1, body: Buffer.alloc(0), secrets: [] })).toThrow();
  });
});
