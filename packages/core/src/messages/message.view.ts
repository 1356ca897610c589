import { formatUsd } from '../catalog/catalog.js';
import { deriveMessageStatus, type DeliveryCounts, type MessageStatus } from './message-status.js';

/** A message row as the service reads it (plain SQL on the hot path). */
export interface MessageRecord {
  id: string;
  tenantId: string;
  eventType: string;
  externalId: string | null;
  origin: 'api' | 'test' | 'source';
  sourceId: string | null;
  contentType: string;
  bodyBytes: number;
  /** Null once the message is redacted. */
  bodySha256: string | null;
  deliverAt: Date;
  expiresAt: Date;
  retainedUntil: Date;
  redactedAt: Date | null;
  redactionStatus: 'redacting' | 'complete' | null;
  contentAvailable: boolean;
  metadata: Record<string, string>;
  ingestUnits: number;
  deliveryUnits: number;
  priceMicros: bigint;
  rateVersion: string;
  createdAt: Date;
}

/** The Message shape of the API. */
export interface MessageView {
  id: string;
  tenant_id: string;
  event_type: string;
  external_id: string | null;
  origin: 'api' | 'test' | 'source';
  source_id: string | null;
  status: MessageStatus;
  body_bytes: number;
  body_sha256: string | null;
  content_type: string;
  deliver_at: string;
  expires_at: string;
  retained_until: string;
  content_available: boolean;
  delivery_counts: DeliveryCounts;
  /**
   * An extension: how many of the original deliveries counted failed or expired a later generation (a replay)
   * delivered since; the status stays the spec's (docs/deliveries.md).
   */
  repaired_count: number;
  price: { ingest_units: number; delivery_units: number; total_usd: string; rate_version: string };
  redacted: boolean;
  redaction_status: 'redacting' | 'complete' | null;
  redacted_at: string | null;
  metadata: Record<string, string>;
  created_at: string;
}

export function toMessageView(
  message: MessageRecord,
  counts: DeliveryCounts,
  now: Date,
  repairedCount: number,
): MessageView {
  return {
    id: message.id,
    tenant_id: message.tenantId,
    event_type: message.eventType,
    external_id: message.externalId,
    origin: message.origin,
    source_id: message.sourceId,
    status: deriveMessageStatus(counts),
    body_bytes: message.bodyBytes,
    body_sha256: message.bodySha256,
    content_type: message.contentType,
    deliver_at: message.deliverAt.toISOString(),
    expires_at: message.expiresAt.toISOString(),
    retained_until: message.retainedUntil.toISOString(),
    content_available: message.contentAvailable && message.redactedAt === null && message.retainedUntil > now,
    delivery_counts: counts,
    repaired_count: repairedCount,
    price: {
      ingest_units: message.ingestUnits,
      delivery_units: message.deliveryUnits,
      total_usd: formatUsd(message.priceMicros),
      rate_version: message.rateVersion,
    },
    redacted: message.redactedAt !== null,
    redaction_status: message.redactionStatus,
    redacted_at: message.redactedAt?.toISOString() ?? null,
    metadata: message.metadata,
    created_at: message.createdAt.toISOString(),
  };
}
