import type {
  CreateSourceMutation,
  SourceFieldsFragment,
  SourceQuery,
  SourcesQuery,
  VerifierKindsQuery,
} from '@/gql/graphql';

/** A source as the API shows it: never its secret or receive URL (those are shown once, by create and rotate). */
export type Source = SourceFieldsFragment;

export type SourcePage = SourcesQuery['sources'];

/** A source with its recent captures and rejections, for its page. */
export type SourceDetail = SourceQuery['source'];

/**
 * What create and the rotations answer: the receive URL (create, rotate receive URL) and a generated secret (create
 * and rotate secret of kinds that generate theirs), to be shown once and then forgotten. Null when not shown.
 */
export type SourceReveal = CreateSourceMutation['createSource'];

/** A verifier kind and a JSON Schema of its settings as input (names, types, defaults, which are required). */
export type VerifierKind = VerifierKindsQuery['verifierKinds'][number];

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
