// A receiver's verifier written from the words of spec/event-subscriptions.md alone, sharing no code with the
// signer: "the key is the base64url decoding of the secret after the whsec_ prefix. The expected signature is the
// hex HMAC-SHA256 of `<t>.<raw_body>`. Accept if any v1 value equals it (constant-time comparison) and the absolute
// difference between now and t is at most 300 seconds."
import { createHmac, timingSafeEqual } from 'node:crypto';

export function verifyAsSpecSays(secret: string, header: string, rawBody: Buffer, nowSeconds: number): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64url');
  const parts = header.split(',').map((part) => part.trim());
  const t = parts.find((part) => part.startsWith('t='))?.slice(2);
  if (t === undefined || !/^[0-9]+$/.test(t)) return false;
  if (Math.abs(nowSeconds - Number(t)) > 300) return false;
  const expected = Buffer.from(
    createHmac('sha256', key)
      .update(Buffer.concat([Buffer.from(`${t}.`), rawBody]))
      .digest('hex'),
  );
  return parts
    .filter((part) => part.startsWith('v1='))
    .map((part) => Buffer.from(part.slice(3)))
    .some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected));
}
