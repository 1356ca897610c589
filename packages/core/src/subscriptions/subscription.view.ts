import { etagFor } from '../common/etag.js';
import type { SubscriptionFormat } from './subscription.inputs.js';

export interface SubscriptionRow {
  id: string;
  team_id: string;
  url: string;
  events: string[];
  environment_ids: string[];
  description: string;
  format: SubscriptionFormat;
  enabled: boolean;
  disabled_reason: string | null;
  version: string;
  secret_version: number;
  secret_created_by: string;
  secret_rotation_ends_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const SUBSCRIPTION_COLUMNS = `id, team_id, url, events, environment_ids, description, format, enabled,
  disabled_reason, version, secret_version, secret_created_by, secret_rotation_ends_at, created_at, updated_at`;

export interface SubscriptionView {
  id: string;
  url: string;
  events: string[];
  environmentIds: string[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  format: SubscriptionFormat;
  version: string;
  /** Null once the overlap is over. */
  secretRotationEndsAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  etag: string;
}

export function toSubscriptionView(row: SubscriptionRow, now: Date): SubscriptionView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    environmentIds: row.environment_ids,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    format: row.format,
    version: String(row.version),
    secretRotationEndsAt:
      row.secret_rotation_ends_at && row.secret_rotation_ends_at > now ? row.secret_rotation_ends_at : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    etag: etagFor(row.id, row.version),
  };
}

export interface PlatformEventRow {
  id: string;
  team_id: string;
  type: string;
  environment_id: string | null;
  revision: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface PlatformEventView {
  id: string;
  type: string;
  createdAt: Date;
  teamId: string;
  environmentId: string | null;
  revision: string | null;
  data: Record<string, unknown>;
}

export function toPlatformEventView(row: PlatformEventRow): PlatformEventView {
  return {
    id: row.id,
    type: row.type,
    createdAt: row.created_at,
    teamId: row.team_id,
    environmentId: row.environment_id,
    revision: row.revision === null ? null : String(row.revision),
    data: row.data,
  };
}

export type SubscriptionDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

export interface SubscriptionAttemptView {
  id: string;
  attempt: number;
  attemptedAt: Date;
  /** The receiver's HTTP status; null when no response came. */
  statusCode: number | null;
  /** null for a 2xx; http_status, timeout, network_error, tls_error or unsafe_destination. */
  errorKind: string | null;
  /** A short, secret-free reason (the chat service's answer, the network error). */
  error: string | null;
  durationMs: number;
}

export interface SubscriptionDeliveryView {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  sequence: string;
  trigger: 'event' | 'manual';
  retryOf: string | null;
  status: SubscriptionDeliveryStatus;
  /** True while it holds its place in the commit order (later events of the subscription wait behind it). */
  ordered: boolean;
  attemptCount: number;
  /** When it may go next; null when done, or while it waits for an earlier event of its subscription. */
  nextAttemptAt: Date | null;
  /** Set when a delivery that blocked its subscription for 24 hours stepped out of the order. */
  releasedAt: Date | null;
  attempts: SubscriptionAttemptView[];
  createdAt: Date;
  updatedAt: Date;
}
