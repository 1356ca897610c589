import type { OperationalEvent } from '../events/event.types';
import type { Message } from '../messages/message.types';

/** A source as the API shows it: never its secret or receive URL (those are shown once, by create and rotate). */
export interface Source {
  id: string;
  tenantId: string;
  name: string;
  /** The verifier kind (one of verifierKinds). */
  kind: string;
  /** `{kind, ...settings}`, flat and named as in the REST API; never the secret. */
  verification: Record<string, unknown>;
  eventType: string | null;
  eventTypePath: string | null;
  eventTypePrefix: string | null;
  billingKeyId: string;
  /** active or paused */
  status: string;
  /** While a rotated-out secret still verifies: when that ends. */
  secretRotationEndsAt: string | null;
  /** While a rotated-out receive URL still answers: when that ends. */
  tokenRotationEndsAt: string | null;
  secretVersion: number;
  tokenVersion: number;
  metadata: Record<string, string>;
  version: string;
  etag: string;
  createdAt: string;
  updatedAt: string;
}

export interface SourcePage {
  nodes: Source[];
  nextCursor: string | null;
}

/** A source with its recent captures and rejections, for its page. */
export interface SourceDetail extends Source {
  /** Its newest captures, newest first. */
  recentMessages: Message[];
  /** Its newest webhooks.source.rejected events of the last 30 days, newest first. */
  recentRejections: OperationalEvent[];
}

/**
 * What create and the rotations answer: the receive URL (create, rotate receive URL) and a generated secret (create
 * and rotate secret of kinds that generate theirs), to be shown once and then forgotten. Null when not shown.
 */
export interface SourceReveal {
  source: Source;
  receiveUrl: string | null;
  secret: string | null;
}

/** A verifier kind and a JSON Schema of its settings as input (names, types, defaults, which are required). */
export interface VerifierKind {
  kind: string;
  /** True: the service makes the secret when none is given; false: the provider issues it. */
  generatesSecret: boolean;
  settings: Record<string, unknown>;
}

/** How a capture gets its event type: one fixed type, or read from the body at a JSON Pointer. */
export type EventTypeMapping =
  | { eventType: string; eventTypePath?: undefined; eventTypePrefix?: undefined }
  | { eventType?: undefined; eventTypePath: string; eventTypePrefix: string | null };

export type CreateSourceInput = EventTypeMapping & {
  tenantId: string;
  name: string;
  /** `{kind, secret?, ...settings}`. */
  verification: Record<string, unknown>;
  /** Absent: the key the console session belongs to. */
  billingKeyId?: string;
  metadata: Record<string, string>;
};

/** An edit: name, mapping, and the kind's settings in full when it has any (not the kind, not the secret). */
export type SourceChanges = EventTypeMapping & {
  name: string;
  verification?: Record<string, unknown>;
  billingKeyId?: string;
  metadata: Record<string, string>;
};

export const SOURCES_PAGE_SIZE = 20;
/** How many captures and rejections the source page lists. */
export const RECENT_CAPTURES = 20;
export const RECENT_REJECTIONS = 20;

/** How long a rotated-out secret or receive URL keeps working, by default and at most. */
export const MAX_ROTATION_OVERLAP_SECONDS = 86_400;

/** The reasons a request is refused (docs/sources.md), in the operator's words. */
export const REJECTION_REASONS: Record<string, string> = {
  missing_signature: 'The signature header(s) were absent or empty',
  duplicate_header: 'A signature, timestamp or event ID header came more than once',
  malformed_signature: 'A signature header could not be parsed',
  bad_signature: 'No active secret verifies the request',
  stale_timestamp: 'The signed timestamp is more than 300 s from now',
  malformed_body: 'The verified body lacks what the kind needs (an event ID, a challenge)',
};

/** What each kind verifies, to help pick one; a kind the console does not know yet shows its name only. */
export const KIND_HINTS: Record<string, string> = {
  standard_webhooks: 'Standard Webhooks senders (webhook-id, webhook-timestamp, webhook-signature)',
  hmac: 'Any sender putting an HMAC of the body in one header (optionally with a timestamp)',
  bearer: 'A sender that can only add Authorization: Bearer <secret>',
  payments: 'Payments provider webhooks signed in Stripe-Signature',
  codehost: 'Code host webhooks signed in X-Hub-Signature-256',
  commerce: 'Commerce platform webhooks signed in X-Shopify-Hmac-Sha256',
  chat: 'Chat platform requests signed in X-Slack-Signature',
  telephony: 'Telephony provider webhooks signed in X-Twilio-Signature',
};
