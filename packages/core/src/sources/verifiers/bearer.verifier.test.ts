import { describe, expect, it } from 'vitest';
import { bearerVerifier as verifier } from './bearer.verifier.js';
import { reject } from './verifier.js';
import { inbound, itBehavesLikeAVerifier, NOW } from './verifier-test-support.js';

const secrets = {
  current: verifier.generateSecret(),
  previous: verifier.generateSecret(),
  unrelated: verifier.generateSecret(),
};

const withAuthorization = (value: string, body = '{"ping":true}') => inbound(body, [['Authorization', value]]);

describe('bearer verifier', () => {
  itBehavesLikeAVerifier({
    verifier,
    settings: {},
    secrets,
    sign: (secret, body) => inbound(body, [['Authorization', `Bearer ${secret}`]]),
    body: '{"ping":true}',
    tamperedBody: '{"ping":false}',
    eventId: null,
    requiredHeaders: ['Authorization'],
    onceOnlyHeaders: ['Authorization'],
    timestamped: false,
    // Nothing is signed: the token only proves the sender knows it.
    signsBody: false,
  });

  it('takes the scheme in any case, as HTTP does', () => {
    expect(verifier.verify(withAuthorization(`bearer ${secrets.current}`), {}, [secrets.current], NOW).ok).toBe(true);
  });

  it.each([`Basic ${secrets.current}`, secrets.current, 'Bearer', `Bearer ${secrets.current} extra`])(
    'refuses Authorization %j as malformed_signature',
    (value) => {
      expect(verifier.verify(withAuthorization(value), {}, [secrets.current], NOW)).toEqual(
        reject('malformed_signature'),
      );
    },
  );

  it('refuses a prefix or an extension of the token', () => {
    for (const token of [secrets.current.slice(0, -1), `${secrets.current}A`]) {
      expect(verifier.verify(withAuthorization(`Bearer ${token}`), {}, [secrets.current], NOW)).toEqual(
        reject('bad_signature'),
      );
    }
  });

  it('generates 43-character Base64url tokens and checks the ones operators bring', () => {
    expect(secrets.current).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set([secrets.current, secrets.previous, secrets.unrelated]).size).toBe(3);
    expect(verifier.checkSecret(secrets.current)).toBeNull();
    expect(verifier.checkSecret('s3cr3t-token-from-the-sender')).toBeNull();
    expect(verifier.checkSecret('too-short')).toMatch(/16 to 512/);
    expect(verifier.checkSecret('has spaces in the middle')).not.toBeNull();
  });

  it('answers with the message ID as JSON', () => {
    expect(verifier.accepted('msg_1', true)).toEqual({
      status: 200,
      contentType: 'application/json',
      body: '{"message_id":"msg_1","duplicate":true}',
    });
  });
});
