import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';

/**
 * A delivery that does not verify. The package's own class (the library's error is rethrown as one, with its
 * message), so that the published types need nothing but this package.
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** Request headers as Node (`IncomingHttpHeaders`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifiedWebhook {
  /** webhook-id: the message ID, the same on every retry and replay; deduplicate by it. */
  id: string;
  /** webhook-timestamp: when this attempt was signed. */
  timestamp: Date;
}

/**
 * Verifies a delivery the service signed (Standard Webhooks) with the endpoint's `whsec_` secret, through the
 * `standardwebhooks` package: the signature over `<webhook-id>.<webhook-timestamp>.<body>` in constant time, any of
 * the space-separated `v1` signatures (two during a secret rotation), and a timestamp within 5 minutes. Pass the
 * body exactly as received (before any JSON parsing). Throws WebhookVerificationError when it does not verify.
 */
export function verify(headers: WebhookHeaders, rawBody: string | Uint8Array, secret: string): VerifiedWebhook {
  const plain = plainHeaders(headers);
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  try {
    new Webhook(secret).verify(body, plain, { jsonParse: false });
  } catch (error) {
    throw error instanceof LibraryVerificationError ? new WebhookVerificationError(error.message) : error;
  }
  return { id: plain['webhook-id']!, timestamp: new Date(Number(plain['webhook-timestamp']) * 1000) };
}

function plainHeaders(headers: WebhookHeaders): Record<string, string> {
  const plain: Record<string, string> = {};
  if (headers instanceof Headers) {
    headers.forEach((value, name) => (plain[name] = value));
    return plain;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    // A repeated signature header is ambiguous: which one did the service send?
    if (Array.isArray(value)) throw new WebhookVerificationError(`Header ${name} appears more than once`);
    plain[name.toLowerCase()] = value;
  }
  return plain;
}
