import { unitPrice } from '../billing/billing.service.js';
import { formatUsd } from '../catalog/catalog.js';
import type { DeliveryStatus } from '../messages/message-status.js';
import type { AttemptErrorDetail } from './attempt-error-detail.js';
import type { AttemptTrigger } from './delivery-policy.js';

/** A delivery row as the inspection reads it (docs/deliveries.md). */
export interface DeliveryRecordRow {
  id: string;
  message_id: string;
  endpoint_id: string;
  tenant_id: string;
  event_type: string;
  generation: number;
  replay_of: string | null;
  replay_id: string | null;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date;
  next_trigger: AttemptTrigger;
  expires_at: Date;
  body_bytes: number;
  content_type: string;
  transformed: boolean;
  delivery_units: number;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  repaired_by: string | null;
  /** bigint as text; null unless the delivery was numbered for an ordered endpoint. */
  sequence: string | null;
}

/** The Delivery shape of the API: one message to one endpoint, in one generation. */
export interface DeliveryView {
  id: string;
  message_id: string;
  endpoint_id: string;
  tenant_id: string;
  event_type: string;
  /** 0 for the original delivery, then 1, 2, ... for each replay of the message to the endpoint. */
  generation: number;
  kind: 'original' | 'replay';
  /** The delivery this one replays (null for originals). */
  replay_of: string | null;
  /** The bulk replay job that created it (null otherwise). */
  replay_id: string | null;
  status: DeliveryStatus;
  attempt_count: number;
  /** When the next attempt is due (null once finished or while an attempt runs). */
  next_attempt_at: string | null;
  last_status_code: number | null;
  /** Why the last attempt failed or the delivery ended (error kind or reason), null after a success. */
  last_error: string | null;
  last_attempt_at: string | null;
  expires_at: string;
  body_bytes: number;
  content_type: string;
  /** Whether the endpoint gets transformed bytes rather than the message content. */
  transformed: boolean;
  price: { delivery_units: number; total_usd: string };
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /**
   * An extension: for a failed or expired delivery, the first later generation of its message to its endpoint that
   * succeeded (it was repaired by a replay); null otherwise. Its status stays failed or expired.
   */
  repaired_by: string | null;
  /**
   * An extension, present only on a delivery numbered for an ordered endpoint: its place in the endpoint's order, the
   * `Svc-Sequence` header it is sent with (docs/delivery.md, "Ordered endpoints").
   */
  sequence?: number;
}

/** An attempt row as the inspection reads it. */
export interface AttemptRecordRow {
  id: string;
  delivery_id: string;
  endpoint_id: string;
  number: number;
  trigger: AttemptTrigger;
  started_at: Date;
  duration_ms: number;
  url_revision: string;
  status_code: number | null;
  error_kind: string | null;
  error_detail: AttemptErrorDetail | null;
  response_body: Buffer | null;
  created_at: Date;
}

/** The Attempt shape of the API: one HTTP request to the receiver. */
export interface AttemptView {
  id: string;
  delivery_id: string;
  endpoint_id: string;
  number: number;
  trigger: AttemptTrigger;
  started_at: string;
  duration_ms: number;
  /** The endpoint's url_revision the request went to. */
  url_revision: number;
  status_code: number | null;
  /** timeout, network, unsafe_destination, ...; null when the receiver answered. */
  error_kind: string | null;
  /**
   * An extension, present only when the attempt got no HTTP answer and recorded why (attempts since migration
   * 0039): the phase, cause, address and phase timings.
   */
  error_detail?: AttemptErrorDetail;
  outcome: 'succeeded' | 'failed';
  /** Up to 4 KiB of the response body, kept only with response_body_logging and for response_retention_days. */
  response_body: string | null;
  response_body_encoding: 'utf8' | 'base64' | null;
  created_at: string;
}

export function toDeliveryView(row: DeliveryRecordRow): DeliveryView {
  const finished = row.finished_at !== null;
  return {
    id: row.id,
    message_id: row.message_id,
    endpoint_id: row.endpoint_id,
    tenant_id: row.tenant_id,
    event_type: row.event_type,
    generation: row.generation,
    kind: row.generation === 0 ? 'original' : 'replay',
    replay_of: row.replay_of,
    replay_id: row.replay_id,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: finished || row.status === 'in_flight' ? null : row.next_attempt_at.toISOString(),
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
    expires_at: row.expires_at.toISOString(),
    body_bytes: row.body_bytes,
    content_type: row.content_type,
    transformed: row.transformed,
    price: {
      delivery_units: row.delivery_units,
      total_usd: formatUsd(BigInt(row.delivery_units) * unitPrice('webhooks.delivery_16k')),
    },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
    repaired_by: row.repaired_by,
    ...(row.sequence === null ? {} : { sequence: Number(row.sequence) }),
  };
}

export function toAttemptView(row: AttemptRecordRow): AttemptView {
  const body = row.response_body;
  const text = body === null ? null : utf8OrNull(body);
  const succeeded = row.status_code !== null && row.status_code >= 200 && row.status_code < 300;
  return {
    id: row.id,
    delivery_id: row.delivery_id,
    endpoint_id: row.endpoint_id,
    number: row.number,
    trigger: row.trigger,
    started_at: row.started_at.toISOString(),
    duration_ms: row.duration_ms,
    url_revision: Number(row.url_revision),
    status_code: row.status_code,
    error_kind: row.error_kind,
    ...(row.error_detail === null ? {} : { error_detail: row.error_detail }),
    outcome: succeeded ? 'succeeded' : 'failed',
    response_body: body === null ? null : (text ?? body.toString('base64')),
    response_body_encoding: body === null ? null : text !== null ? 'utf8' : 'base64',
    created_at: row.created_at.toISOString(),
  };
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function utf8OrNull(bytes: Buffer): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}
