import { sign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { codehostVerifier as verifier } from './codehost.verifier.js';
import { reject } from './verifier.js';
import { inbound, itBehavesLikeAVerifier, NOW } from './verifier-test-support.js';

const secrets = { current: 'octo-secret-current', previous: 'octo-secret-previous', unrelated: 'not-our-secret' };
const DELIVERY = '72d3162e-cc78-11e3-81ab-4c9367dc0958';
const PUSH = '{"ref":"refs/heads/main","after":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"}';

/** A request as GitHub sends it, X-Hub-Signature-256 made by the official `@octokit/webhooks-methods`. */
async function signed(secret: string, body: Buffer | string, delivery: string | null = DELIVERY) {
  const headers: [string, string][] = [
    ['Content-Type', 'application/json'],
    ['X-GitHub-Event', 'push'],
    ['X-Hub-Signature-256', await sign(secret, body.toString())],
  ];
  if (delivery !== null) headers.push(['X-GitHub-Delivery', delivery]);
  return inbound(body, headers);
}

describe('codehost verifier (GitHub scheme)', () => {
  itBehavesLikeAVerifier({
    verifier,
    settings: {},
    secrets,
    sign: (secret, body) => signed(secret, body),
    body: PUSH,
    tamperedBody: PUSH.replace('main', 'release'),
    eventId: DELIVERY,
    requiredHeaders: ['X-Hub-Signature-256'],
    onceOnlyHeaders: ['X-Hub-Signature-256', 'X-GitHub-Delivery'],
    timestamped: false,
  });

  it("verifies the example in GitHub's documentation", () => {
    const request = inbound('Hello, World!', [
      ['X-Hub-Signature-256', 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17'],
    ]);
    expect(verifier.verify(request, {}, ["It's a Secret to Everybody"], NOW)).toEqual({ ok: true, eventId: null });
  });

  it('accepts what the official library accepts, and refuses what it refuses', async () => {
    const signature = await sign(secrets.current, PUSH);
    const request = inbound(PUSH, [['X-Hub-Signature-256', signature]]);
    expect(await octokitVerify(secrets.current, PUSH, signature)).toBe(true);
    expect(verifier.verify(request, {}, [secrets.current], NOW).ok).toBe(true);
    expect(await octokitVerify(secrets.previous, PUSH, signature)).toBe(false);
    expect(verifier.verify(request, {}, [secrets.previous], NOW).ok).toBe(false);
  });

  it('deduplicates by body when X-GitHub-Delivery is absent', async () => {
    expect(verifier.verify(await signed(secrets.current, PUSH, null), {}, [secrets.current], NOW)).toEqual({
      ok: true,
      eventId: null,
    });
  });

  it('does not accept the legacy SHA-1 X-Hub-Signature alone', () => {
    const request = inbound(PUSH, [['X-Hub-Signature', 'sha1=0000000000000000000000000000000000000000']]);
    expect(verifier.verify(request, {}, [secrets.current], NOW)).toEqual(reject('missing_signature'));
  });

  it.each(['sha1=abcd', 'abcdef', 'sha256=not-hex'])('refuses %j as malformed_signature', (value) => {
    const request = inbound(PUSH, [['X-Hub-Signature-256', value]]);
    expect(verifier.verify(request, {}, [secrets.current], NOW)).toEqual(reject('malformed_signature'));
  });

  it('takes any non-empty secret', () => {
    expect(verifier.generateSecret()).toBeNull();
    expect(verifier.checkSecret('x')).toBeNull();
    expect(verifier.checkSecret('')).not.toBeNull();
  });
});
