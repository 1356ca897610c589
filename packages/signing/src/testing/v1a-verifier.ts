// A receiver's v1a verifier written from the Standard Webhooks specification's words alone, sharing no code with the
// signer: "the public key is the Base64 after whpk_, 32 raw ed25519 bytes. The signed content is
// `<webhook-id>.<webhook-timestamp>.<body>`. webhook-signature holds space-separated `<version>,<Base64 signature>`
// entries; accept if any v1a entry verifies under the public key and the timestamp is within the tolerance."
import { createPublicKey, verify } from 'node:crypto';

/** The DER head of an ed25519 SubjectPublicKeyInfo (RFC 8410), before the 32 key bytes. */
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function verifyV1aAsSpecSays(
  publicKey: string,
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string },
  rawBody: Buffer,
  nowSeconds: number,
): boolean {
  if (!publicKey.startsWith('whpk_')) return false;
  const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  if (raw.length !== 32) return false;
  const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
  const timestamp = headers['webhook-timestamp'];
  if (!/^[0-9]+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const content = Buffer.concat([Buffer.from(`${headers['webhook-id']}.${timestamp}.`), rawBody]);
  return headers['webhook-signature']
    .split(' ')
    .filter((entry) => entry.startsWith('v1a,'))
    .some((entry) => verify(null, content, key, Buffer.from(entry.slice(4), 'base64')));
}
