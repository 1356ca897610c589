import type { Clock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import type { AttemptTrigger } from '../deliveries/delivery-policy.js';
import type { ClaimedAttempt } from '../engine/dispatch.service.js';

/** What the claim and the settlement of a stream lease both read of a delivery and its endpoint. */
export interface StreamLeaseFields {
  id: string | null;
  team_id: string;
  tenant_id: string;
  endpoint_id: string;
  message_id: string;
  event_type: string;
  attempt_count: number;
  next_trigger: AttemptTrigger;
  expires_at: Date;
  sequence: string | null;
  content_type: string;
  timeout_seconds: number;
  url_revision: string;
  retry_delays_seconds: number[];
}

/**
 * A stream lease as the engine's ClaimedAttempt (what SettlementService settles): no URL or Authorization. The
 * trigger is the push claim's: a probe while the circuit is not closed, a retry after a lease that never settled.
 */
export function streamAttempt(
  clock: Clock,
  row: StreamLeaseFields,
  lease: { attemptNumber: number; probing: boolean; startedAt: Date },
  sent: Pick<ClaimedAttempt, 'body' | 'headers' | 'signingSecrets' | 'dueSince' | 'traceparent'>,
): ClaimedAttempt {
  const { attemptNumber, probing, startedAt } = lease;
  return {
    deliveryId: row.id!,
    messageId: row.message_id,
    endpointId: row.endpoint_id,
    teamId: row.team_id,
    tenantId: row.tenant_id,
    eventType: row.event_type,
    attemptId: newId('attempt', clock),
    attemptNumber,
    trigger: probing ? 'probe' : attemptNumber - 1 > row.attempt_count ? 'retry' : row.next_trigger,
    url: '',
    urlRevision: String(row.url_revision),
    timeoutMs: row.timeout_seconds * 1000,
    contentType: row.content_type,
    authorization: null,
    retryDelaysSeconds: row.retry_delays_seconds,
    expiresAt: row.expires_at,
    startedAt,
    sequence: row.sequence === null ? null : String(row.sequence),
    ...sent,
  };
}
