export { createClient, type ClientOptions, type Result, type SvcClient } from './client.js';
export { SvcApiError } from './errors.js';
export { type RetryPolicy, DEFAULT_RETRY_POLICY } from './retry.js';
export { verify, WebhookVerificationError, type VerifiedWebhook, type WebhookHeaders } from './verify.js';
export type { ListItem, ListPath, Paths, Schema } from './paths.js';
export type { components, operations, paths } from './generated/openapi.js';
export {
  listen,
  type ConnectionEvent,
  type DeliveryOutcome,
  type ListenOptions,
  type StreamDelivery,
} from './listen.js';
export type { AckResult } from './stream-acks.js';
