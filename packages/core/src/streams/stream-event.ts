import { buildDeliveryHeaders } from '@svc/egress';
import { signPayload } from '@svc/signing';
import type { ClaimedAttempt } from '../engine/dispatch.service.js';

/** One delivery as a stream event's data (docs/streams.md): what a push POST would have carried, headers and bytes. */
export interface StreamEventData {
  delivery_id: string;
  message_id: string;
  attempt: number;
  event_type: string;
  /** Lower-case names, exactly the values a push attempt sends (Standard Webhooks, Svc-*, custom headers). */
  headers: Record<string, string>;
  /** The body as UTF-8 text, when it is valid UTF-8 ... */
  body?: string;
  /** ... else its bytes in standard Base64. */
  body_base64?: string;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Signs the attempt the way the push engine does (webhook-timestamp is wall-clock time, the signature is over the
 * exact body bytes with every current secret) and renders it as an event's data. The receiver verifies it with the
 * stock Standard Webhooks libraries: `new Webhook(secret).verify(body, headers)`.
 */
export function streamEventData(attempt: ClaimedAttempt, docsUrl: string, nowMs = Date.now()): StreamEventData {
  const timestamp = Math.floor(nowMs / 1000);
  const signature = signPayload({
    msgId: attempt.messageId,
    timestamp,
    body: attempt.body,
    secrets: attempt.signingSecrets,
  });
  const sent = buildDeliveryHeaders({
    contentType: attempt.contentType,
    docsUrl,
    custom: attempt.headers,
    authorization: null,
    msgId: attempt.messageId,
    timestamp,
    signature,
    deliveryId: attempt.deliveryId,
    attemptId: attempt.attemptId,
    eventType: attempt.eventType,
    sequence: attempt.sequence,
  });
  const headers = Object.fromEntries(Object.entries(sent).map(([name, value]) => [name.toLowerCase(), value]));
  let text: string | null;
  try {
    text = strictUtf8.decode(attempt.body);
  } catch {
    text = null;
  }
  return {
    delivery_id: attempt.deliveryId,
    message_id: attempt.messageId,
    attempt: attempt.attemptNumber,
    event_type: attempt.eventType,
    headers,
    ...(text === null ? { body_base64: attempt.body.toString('base64') } : { body: text }),
  };
}
