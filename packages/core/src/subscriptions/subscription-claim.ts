import type { EntityManager } from 'typeorm';
import { addMs, formatTimestamp } from '../common/clock.js';
import type { Sealer } from '../common/sealing.js';
import { queryRows } from '../common/transaction.js';
import { chatDeliveryUrl, renderChatPayload, type ChangeSummary } from './chat-formats.js';
import { ACKNOWLEDGE_TIMEOUT_MS, SUBSCRIPTION_LEASE_MS } from './subscription-delivery-policy.js';
import type { SubscriptionFormat } from './subscription.inputs.js';
import { subscriptionSecretContext } from './subscription.service.js';

/** One attempt, ready to sign and send: IDs, the exact body, and the secrets that sign it now. */
export interface ClaimedSubscriptionAttempt {
  deliveryId: string;
  subscriptionId: string;
  eventId: string;
  /** This attempt's number (1-based); settlement matches it, so a stale attempt cannot settle a newer claim. */
  attempt: number;
  url: string;
  format: SubscriptionFormat;
  body: Buffer;
  /** The current secret first, then the previous one during a rotation overlap. */
  secrets: string[];
  timeoutMs: number;
}

export interface ClaimRow {
  id: string;
  subscription_id: string;
  event_id: string;
  sequence: string;
  attempt_count: number;
  url: string;
  format: SubscriptionFormat;
  secret_sealed: Buffer;
  secret_version: number;
  previous_secret_sealed: Buffer | null;
  previous_secret_version: number | null;
  secret_rotation_ends_at: Date | null;
  type: string;
  event_created_at: Date;
  team_id: string;
  environment_id: string | null;
  revision: string | null;
  data: Record<string, unknown>;
  environment_name: string | null;
}

/** The standard-format body: the event, with the subscription's sequence number so receivers can check order. */
export function renderEventBody(
  row: Pick<
    ClaimRow,
    'event_id' | 'type' | 'event_created_at' | 'team_id' | 'environment_id' | 'revision' | 'data' | 'sequence'
  >,
): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: row.event_id,
      type: row.type,
      created_at: formatTimestamp(row.event_created_at),
      team_id: row.team_id,
      environment_id: row.environment_id,
      revision: row.revision === null ? null : String(row.revision),
      sequence: Number(row.sequence),
      data: row.data,
    }),
    'utf8',
  );
}

/**
 * Leases a delivery that may go now: due, not leased, its subscription alive (or a manual retry), and first among
 * its subscription's pending ordered deliveries unless it is out of the order. Null: none to claim.
 */
export async function leaseDelivery(tx: EntityManager, deliveryId: string, now: Date): Promise<ClaimRow | null> {
  const rows: ClaimRow[] = await queryRows<ClaimRow>(
    tx,
    `WITH c AS (
     SELECT d.id FROM subscription_deliveries d JOIN event_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1 AND d.status = 'pending' AND d.next_attempt_at <= $2
        AND (d.lease_until IS NULL OR d.lease_until <= $2)
        AND s.deleted_at IS NULL AND (s.enabled OR d.trigger = 'manual')
        AND (NOT d.ordered OR NOT EXISTS (
              SELECT 1 FROM subscription_deliveries e
               WHERE e.subscription_id = d.subscription_id AND e.status = 'pending' AND e.ordered
                 AND e.sequence < d.sequence))
      FOR NO KEY UPDATE OF d SKIP LOCKED
   )
   UPDATE subscription_deliveries d SET lease_until = $3, attempt_count = d.attempt_count + 1, updated_at = $2
     FROM c, event_subscriptions s, platform_events e
     LEFT JOIN feature_flag_environments env ON env.id = e.environment_id
    WHERE d.id = c.id AND s.id = d.subscription_id AND e.id = d.event_id
   RETURNING d.id, d.subscription_id, d.event_id, d.sequence, d.attempt_count, s.url, s.format,
             s.secret_sealed, s.secret_version, s.previous_secret_sealed, s.previous_secret_version,
             s.secret_rotation_ends_at, e.type, e.created_at AS event_created_at, e.team_id, e.environment_id,
             e.revision, e.data, env.name AS environment_name`,
    [deliveryId, now, addMs(now, SUBSCRIPTION_LEASE_MS)],
  );
  return rows[0] ?? null;
}

/** The attempt to send for a leased row: the secrets that sign it now, its URL and its exact body. */
export function toClaimedAttempt(
  row: ClaimRow,
  sealer: Sealer,
  consoleUrl: string | null,
  now: Date,
): ClaimedSubscriptionAttempt {
  const secrets = [sealer.open(row.secret_sealed, subscriptionSecretContext(row.subscription_id, row.secret_version))];
  if (
    row.previous_secret_sealed &&
    row.previous_secret_version !== null &&
    row.secret_rotation_ends_at &&
    row.secret_rotation_ends_at > now
  )
    secrets.push(
      sealer.open(
        row.previous_secret_sealed,
        subscriptionSecretContext(row.subscription_id, row.previous_secret_version),
      ),
    );
  const chat = row.format !== 'svc' ? row.format : null;
  return {
    deliveryId: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    attempt: row.attempt_count,
    url: chat ? chatDeliveryUrl(chat, row.url) : row.url,
    format: row.format,
    body: chat ? renderChatPayload(chat, changeSummary(row, consoleUrl)) : renderEventBody(row),
    secrets,
    timeoutMs: ACKNOWLEDGE_TIMEOUT_MS,
  };
}

/** What a chat summary says of the claimed event (identifiers and the kind of change only). */
export function changeSummary(row: ClaimRow, consoleUrl: string | null): ChangeSummary {
  const data = row.data;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const change = text(data['change']);
  const link = consoleUrl
    ? row.environment_id
      ? `${consoleUrl}/feature-flags/${row.environment_id}`
      : `${consoleUrl}/event-subscriptions/${row.subscription_id}`
    : null;
  return {
    eventId: row.event_id,
    type: row.type,
    createdAt: row.event_created_at,
    environment:
      row.environment_id === null ? null : { id: row.environment_id, name: row.environment_name ?? row.environment_id },
    revision: row.revision === null ? null : String(row.revision),
    flagKey: text(data['flag_key']),
    change: change === 'created' || change === 'updated' || change === 'deleted' ? change : null,
    changedFields: Array.isArray(data['changed_fields'])
      ? data['changed_fields'].filter((f): f is string => typeof f === 'string')
      : [],
    actorKeyId: text(data['actor_key_id']),
    consoleUrl: link,
    subscriptionId: row.subscription_id,
  };
}
