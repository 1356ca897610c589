import type { StreamLeaseFields } from './stream-attempt.js';

/**
 * The stream leases this process's claims handed out and that are not answered yet, by delivery ID: what an
 * acknowledgement reaching this process needs to be settled without reading its lease first (stream-settle.ts).
 * Only a shortcut: the settlement is fenced by the lease (owner, attempt) in the database as always, and checked
 * against the endpoint's and circuit's versions in its own transaction.
 */
export interface KnownLease {
  connectionId: string;
  attempt: number;
  dueAt: Date;
  endpointVersion: string;
  fields: StreamLeaseFields;
}

const byDelivery = new Map<string, KnownLease>();
const byConnection = new Map<string, Set<string>>();
/** Past this many known leases, those whose lease has ended are dropped (their deliveries were settled elsewhere). */
const PRUNE_ABOVE = 10_000;

export function rememberLease(
  connectionId: string,
  row: StreamLeaseFields & { endpoint_version: string },
  attempt: number,
  dueAt: Date,
): void {
  if (byDelivery.size >= PRUNE_ABOVE) pruneEnded(new Date());
  // Only what settling needs (the claim's row holds the body and the secrets too).
  const fields: StreamLeaseFields = {
    id: row.id,
    team_id: row.team_id,
    tenant_id: row.tenant_id,
    endpoint_id: row.endpoint_id,
    message_id: row.message_id,
    event_type: row.event_type,
    attempt_count: row.attempt_count,
    next_trigger: row.next_trigger,
    expires_at: row.expires_at,
    sequence: row.sequence,
    content_type: row.content_type,
    timeout_seconds: row.timeout_seconds,
    url_revision: row.url_revision,
    retry_delays_seconds: row.retry_delays_seconds,
  };
  const endpointVersion = String(row.endpoint_version);
  forgetLease(fields.id!);
  byDelivery.set(fields.id!, { connectionId, attempt, dueAt, endpointVersion, fields });
  let ids = byConnection.get(connectionId);
  if (!ids) byConnection.set(connectionId, (ids = new Set()));
  ids.add(fields.id!);
}

export function knownLease(deliveryId: string): KnownLease | undefined {
  return byDelivery.get(deliveryId);
}

/** The delivery's lease was answered (or found stale): it is no longer this process's to settle from memory. */
export function forgetLease(deliveryId: string): void {
  const lease = byDelivery.get(deliveryId);
  if (!lease) return;
  byDelivery.delete(deliveryId);
  const ids = byConnection.get(lease.connectionId);
  ids?.delete(deliveryId);
  if (ids?.size === 0) byConnection.delete(lease.connectionId);
}

/** The connection ended: what it held is offered again under new leases. */
export function forgetConnectionLeases(connectionId: string): void {
  for (const id of byConnection.get(connectionId) ?? []) byDelivery.delete(id);
  byConnection.delete(connectionId);
}

function pruneEnded(now: Date): void {
  for (const [id, lease] of byDelivery) if (lease.dueAt <= now) forgetLease(id);
}
