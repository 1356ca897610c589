import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { commerceVerifier as verifier } from './commerce.verifier.js';
import { reject } from './verifier.js';
import { inbound, itBehavesLikeAVerifier, NOW } from './verifier-test-support.js';

// Shopify publishes no official Node verifier outside its app framework, nor a test vector: the signature is
// computed as its docs ("Verify the webhook") describe, with node:crypto: the Base64 HMAC-SHA256 of the raw body,
// keyed by the app's client secret.
const secrets = {
  current: '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',
  previous: 'shpss_0123456789abcdef0123456789abcdef',
  unrelated: 'shpss_ffffffffffffffffffffffffffffffff',
};
const ORDER = '{"id":820982911946154508,"email":"jon@example.com","total_price":"403.00"}';

const hmacOf = (secret: string, body: Buffer | string) => createHmac('sha256', secret).update(body).digest('base64');

function signed(secret: string, body: Buffer | string, ids: { event?: string; webhook?: string } = {}) {
  const headers: [string, string][] = [
    ['Content-Type', 'application/json'],
    ['X-Shopify-Topic', 'orders/create'],
    ['X-Shopify-Hmac-Sha256', hmacOf(secret, body)],
    ['X-Shopify-Shop-Domain', 'example.myshopify.com'],
  ];
  if (ids.webhook !== undefined) headers.push(['X-Shopify-Webhook-Id', ids.webhook]);
  if (ids.event !== undefined) headers.push(['X-Shopify-Event-Id', ids.event]);
  return inbound(body, headers);
}

const IDS = { webhook: 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043', event: '98880550-7158-44d4-b7cd-2c97c8a091b5' };

describe('commerce verifier (Shopify scheme)', () => {
  itBehavesLikeAVerifier({
    verifier,
    settings: {},
    secrets,
    sign: (secret, body) => signed(secret, body, IDS),
    body: ORDER,
    tamperedBody: ORDER.replace('403.00', '4.03'),
    eventId: IDS.event,
    requiredHeaders: ['X-Shopify-Hmac-Sha256'],
    onceOnlyHeaders: ['X-Shopify-Hmac-Sha256', 'X-Shopify-Event-Id', 'X-Shopify-Webhook-Id'],
    timestamped: false,
  });

  it('deduplicates by X-Shopify-Event-Id, else X-Shopify-Webhook-Id, else by body', () => {
    const verify = (ids: { event?: string; webhook?: string }) =>
      verifier.verify(signed(secrets.current, ORDER, ids), {}, [secrets.current], NOW);
    expect(verify(IDS)).toEqual({ ok: true, eventId: IDS.event });
    expect(verify({ webhook: IDS.webhook })).toEqual({ ok: true, eventId: IDS.webhook });
    expect(verify({})).toEqual({ ok: true, eventId: null });
  });

  it('takes the header name in any case', () => {
    const request = inbound(ORDER, [['x-shopify-hmac-sha256', hmacOf(secrets.current, ORDER)]]);
    expect(verifier.verify(request, {}, [secrets.current], NOW).ok).toBe(true);
  });

  it('refuses a value that is not Base64 as malformed, and a hex digest or a truncated one as bad', () => {
    const hex = createHmac('sha256', secrets.current).update(ORDER).digest('hex');
    const verify = (value: string) =>
      verifier.verify(inbound(ORDER, [['X-Shopify-Hmac-Sha256', value]]), {}, [secrets.current], NOW);
    expect(verify('not base64!')).toEqual(reject('malformed_signature'));
    expect(verify(hex)).toEqual(reject('bad_signature'));
    expect(verify(hmacOf(secrets.current, ORDER).slice(0, 40))).toEqual(reject('bad_signature'));
  });

  it('checks the secret', () => {
    expect(verifier.generateSecret()).toBeNull();
    expect(verifier.checkSecret(secrets.current)).toBeNull();
    expect(verifier.checkSecret('short')).not.toBeNull();
  });
});
