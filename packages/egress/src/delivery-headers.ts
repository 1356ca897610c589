// The headers of an outbound delivery, exactly as the spec's table lists them ("Outbound delivery requests").
// Endpoint input validation already refuses custom header names the service sets itself; this builder skips
// them again so that a stored custom header can never replace a signature, the content type or the framing.

export interface DeliveryHeadersInput {
  readonly contentType: string;
  /** Goes into `User-Agent: Svc-Webhooks/1.0 (+<docs_url>)`. */
  readonly docsUrl: string;
  /** The endpoint's custom headers. */
  readonly custom: Readonly<Record<string, string>>;
  /** The endpoint's Authorization value, or null for none. */
  readonly authorization: string | null;
  /** webhook-id: the message ID, the same across retries and replays. */
  readonly msgId: string;
  /** webhook-timestamp: unix seconds, fresh for each attempt. */
  readonly timestamp: number;
  /** webhook-signature, from signPayload over the same msgId, timestamp and body. */
  readonly signature: string;
  readonly deliveryId: string;
  readonly attemptId: string;
  readonly eventType: string;
  /** An ordered endpoint's number for this delivery (Svc-Sequence, not signed); null or absent: none. */
  readonly sequence?: string | null;
}

// Names the service sets, and hop-by-hop or framing headers the HTTP client owns.
const RESERVED_NAMES = new Set([
  'content-type',
  'user-agent',
  'authorization',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
  'accept-encoding',
]);
const RESERVED_PREFIXES = ['webhook-', 'svc-'];

function isReserved(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_NAMES.has(lower) || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

export function userAgent(docsUrl: string): string {
  return `Svc-Webhooks/1.0 (+${docsUrl})`;
}

export function buildDeliveryHeaders(input: DeliveryHeadersInput): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': input.contentType,
    'User-Agent': userAgent(input.docsUrl),
  };
  for (const [name, value] of Object.entries(input.custom)) {
    if (!isReserved(name)) headers[name] = value;
  }
  if (input.authorization !== null) headers['Authorization'] = input.authorization;
  headers['webhook-id'] = input.msgId;
  headers['webhook-timestamp'] = String(input.timestamp);
  headers['webhook-signature'] = input.signature;
  headers['Svc-Delivery-Id'] = input.deliveryId;
  headers['Svc-Attempt-Id'] = input.attemptId;
  headers['Svc-Event-Type'] = input.eventType;
  if (input.sequence) headers['Svc-Sequence'] = input.sequence;
  return headers;
}
