import type { EntityManager } from 'typeorm';
import { admissionFactsSql } from '../analytics/analytics-facts.js';
import type { BillingService, ChargeItem } from '../billing/billing.service.js';
import type { Actor } from '../common/context.js';
import { bindPackedBytes, queryPrepared, statementParameters } from '../common/transaction.js';
import { wakeEndpoints } from '../engine/wake-endpoints.js';
import { orderedNumbering, sequenceCtes } from '../deliveries/ordering.js';
import { idempotencyRecordsSql, type IdempotencyRecord } from '../idempotency/idempotency.service.js';
import type { MessageBody } from './message-body.js';
import type { MessageRecord } from './message.view.js';
import type { MatchedDelivery } from './matching.js';

/** One admitted message, decided and priced: what the write statement stores for it. */
export interface AdmissionPlan {
  teamId: string;
  record: MessageRecord;
  body: MessageBody;
  deliveries: MatchedDelivery[];
  deliveryIds: string[];
  /** The admission slot the message holds: its shard of the queue counters. */
  shard: number;
  storedBytes: number;
  payer: Actor;
  charges: ChargeItem[];
  /** The completed Idempotency-Key record, for a request that had a key. */
  idempotency: IdempotencyRecord | null;
  /** The admission span's W3C traceparent, which the worker continues at each attempt; null: tracing is off. */
  traceparent: string | null;
}

/**
 * One statement for a whole batch, whatever its size and fan-out: the messages, their contents, one delivery and
 * one delivery_queue row per matched endpoint, the endpoints' and teams' queue counters (in ID order, like every
 * statement that moves them), the analytics facts, the charges, the idempotency records, and one NOTIFY of every
 * endpoint that got a delivery (sent at commit). Answers the paying keys whose spend moved; the caller charges any
 * other key on its own (a limit or a closed month refused it here).
 */
export async function writeAdmissions(
  tx: EntityManager,
  plans: readonly AdmissionPlan[],
  now: Date,
  billing: BillingService,
): Promise<Set<string>> {
  const { bind, parameters } = statementParameters();
  const deliveries = plans.flatMap((plan) =>
    plan.deliveries.map((delivery, i) => ({ plan, delivery, id: plan.deliveryIds[i]! })),
  );
  const messageIds = bind(plans.map((p) => p.record.id));
  const teamIds = bind(plans.map((p) => p.teamId));
  const deliveryIds = bind(deliveries.map((d) => d.id));
  const deliveryEndpoints = bind(deliveries.map((d) => d.delivery.endpointId));
  const deliveryDue = bind(deliveries.map((d) => d.plan.record.deliverAt));
  const deliveryExpiry = bind(deliveries.map((d) => d.plan.record.expiresAt));
  const at = `${bind(now)}::timestamptz`;
  const endpointCounts = endpointCounters(plans);
  const teamCounts = teamCounters(plans);
  const records = plans.flatMap((p) => (p.idempotency ? [p.idempotency] : []));
  // A delivery scheduled for later is numbered when it comes due (deliveries/ordering.ts).
  const order = orderedNumbering(
    deliveries.map((d) => d.delivery.endpointId),
    deliveries.map((d) => d.plan.record.deliverAt > now),
  );
  const ranks = bind(order.ranks);
  // The bodies, and the transformed bodies of the deliveries that have one, in binary (bindPackedBytes).
  const bodies = bindPackedBytes(
    bind,
    plans.map((p) => p.body.bytes),
  );
  const transformed = bindPackedBytes(
    bind,
    deliveries.map((d) => d.delivery.body),
  );

  const ctes = [
    `message AS (
       INSERT INTO messages (id, team_id, tenant_id, event_type, external_id, origin, source_id, content_type,
                             body_bytes, body_sha256, deliver_at, expires_at, retained_until, metadata,
                             paying_key_id, ingest_units, delivery_units, price_micros, rate_version, traceparent, created_at)
       SELECT x.id, x.team_id, x.tenant_id, x.event_type, x.external_id, x.origin, x.source_id, x.content_type,
              x.body_bytes, x.body_sha256, x.deliver_at, x.expires_at, x.retained_until, x.metadata::jsonb,
              x.paying_key_id, x.ingest_units, x.delivery_units, x.price_micros, x.rate_version, x.traceparent, ${at}
         FROM unnest(${messageIds}::text[], ${teamIds}::text[], ${bind(plans.map((p) => p.record.tenantId))}::text[],
                     ${bind(plans.map((p) => p.record.eventType))}::text[],
                     ${bind(plans.map((p) => p.record.externalId))}::text[],
                     ${bind(plans.map((p) => p.record.origin))}::text[],
                     ${bind(plans.map((p) => p.record.sourceId))}::text[],
                     ${bind(plans.map((p) => p.record.contentType))}::text[],
                     ${bind(plans.map((p) => p.record.bodyBytes))}::int[],
                     ${bind(plans.map((p) => p.record.bodySha256))}::text[],
                     ${bind(plans.map((p) => p.record.deliverAt))}::timestamptz[],
                     ${bind(plans.map((p) => p.record.expiresAt))}::timestamptz[],
                     ${bind(plans.map((p) => p.record.retainedUntil))}::timestamptz[],
                     ${bind(plans.map((p) => JSON.stringify(p.record.metadata)))}::text[],
                     ${bind(plans.map((p) => p.payer.keyId))}::text[],
                     ${bind(plans.map((p) => p.record.ingestUnits))}::int[],
                     ${bind(plans.map((p) => p.record.deliveryUnits))}::int[],
                     ${bind(plans.map((p) => p.record.priceMicros.toString()))}::bigint[],
                     ${bind(plans.map((p) => p.record.rateVersion))}::text[],
                     ${bind(plans.map((p) => p.traceparent))}::text[])
              AS x(id, team_id, tenant_id, event_type, external_id, origin, source_id, content_type, body_bytes,
                   body_sha256, deliver_at, expires_at, retained_until, metadata, paying_key_id, ingest_units,
                   delivery_units, price_micros, rate_version, traceparent))`,
    `content AS (
       INSERT INTO message_contents (message_id, team_id, body)
       SELECT x.message_id, x.team_id, ${bodies.value('x.body_at', 'x.body_length')}
         FROM unnest(${messageIds}::text[], ${teamIds}::text[], ${bodies.offsets}, ${bodies.lengths})
              AS x(message_id, team_id, body_at, body_length))`,
    // Ordered endpoints number their deliveries here, in commit order (deliveries/ordering.ts).
    ...sequenceCtes(`${bind(order.endpoints)}::text[]`, `${bind(order.counts)}::int[]`),
    `delivery AS (
       INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, next_attempt_at,
                               expires_at, body, body_bytes, content_type, delivery_units, sequence, created_at,
                               updated_at)
       SELECT x.id, x.team_id, x.tenant_id, x.message_id, x.endpoint_id, x.event_type, 'queued', x.due, x.expires_at,
              ${transformed.value('x.body_at', 'x.body_length')}, x.body_bytes, x.content_type, x.units,
              seq.first + x.rank - 1, ${at}, ${at}
         FROM unnest(${deliveryIds}::text[], ${bind(deliveries.map((d) => d.plan.teamId))}::text[],
                     ${bind(deliveries.map((d) => d.plan.record.tenantId))}::text[],
                     ${bind(deliveries.map((d) => d.plan.record.id))}::text[], ${deliveryEndpoints}::text[],
                     ${bind(deliveries.map((d) => d.plan.record.eventType))}::text[],
                     ${deliveryDue}::timestamptz[], ${deliveryExpiry}::timestamptz[],
                     ${transformed.offsets}, ${transformed.lengths},
                     ${bind(deliveries.map((d) => d.delivery.bodyBytes))}::int[],
                     ${bind(deliveries.map((d) => d.plan.record.contentType))}::text[],
                     ${bind(deliveries.map((d) => d.delivery.units))}::int[], ${ranks}::int[])
              AS x(id, team_id, tenant_id, message_id, endpoint_id, event_type, due, expires_at, body_at, body_length,
                   body_bytes, content_type, units, rank)
         LEFT JOIN seq ON seq.endpoint_id = x.endpoint_id)`,
    // Every pending delivery has its queue row from the transaction that admits it (the engine claims from here).
    `queue AS (
       INSERT INTO delivery_queue (delivery_id, endpoint_id, due_at, expires_at, sequence)
       SELECT x.id, x.endpoint_id, x.due, x.expires_at, seq.first + x.rank - 1
         FROM unnest(${deliveryIds}::text[], ${deliveryEndpoints}::text[], ${deliveryDue}::timestamptz[],
                     ${deliveryExpiry}::timestamptz[], ${ranks}::int[]) AS x(id, endpoint_id, due, expires_at, rank)
         LEFT JOIN seq ON seq.endpoint_id = x.endpoint_id)`,
    `endpoint_counts AS (
       INSERT INTO endpoint_queue_counts AS q (endpoint_id, shard, pending)
       SELECT x.endpoint_id, x.shard, x.n
         FROM unnest(${bind(endpointCounts.map((c) => c.endpointId))}::text[],
                     ${bind(endpointCounts.map((c) => c.shard))}::smallint[],
                     ${bind(endpointCounts.map((c) => c.pending))}::bigint[]) WITH ORDINALITY AS x(endpoint_id, shard, n, i)
        ORDER BY x.i
       ON CONFLICT (endpoint_id, shard) DO UPDATE SET pending = q.pending + EXCLUDED.pending)`,
    `team_counts AS (
       INSERT INTO team_queue_counts AS t (team_id, shard, pending, content_bytes)
       SELECT x.team_id, x.shard, x.pending, x.content_bytes
         FROM unnest(${bind(teamCounts.map((c) => c.teamId))}::text[], ${bind(teamCounts.map((c) => c.shard))}::smallint[],
                     ${bind(teamCounts.map((c) => c.pending))}::bigint[],
                     ${bind(teamCounts.map((c) => c.contentBytes))}::bigint[]) WITH ORDINALITY
              AS x(team_id, shard, pending, content_bytes, i)
        ORDER BY x.i
       ON CONFLICT (team_id, shard) DO UPDATE
         SET pending = t.pending + EXCLUDED.pending, content_bytes = t.content_bytes + EXCLUDED.content_bytes)`,
    `facts AS (${admissionFactsSql({
      teamIds: `${teamIds}::text[]`,
      tenantIds: `${bind(plans.map((p) => p.record.tenantId))}::text[]`,
      sourceIds: `${bind(plans.map((p) => p.record.sourceId))}::text[]`,
      at,
      bodyBytes: `${bind(plans.map((p) => p.record.bodyBytes))}::bigint[]`,
      deliveries: `${bind(plans.map((p) => p.deliveries.length))}::int[]`,
      fanouts: `${bind(plans.map((p) => JSON.stringify(p.deliveries.map((d) => d.endpointId).sort())))}::jsonb[]`,
    })})`,
    billing.batchChargeSql(
      plans.map((p) => ({ payer: p.payer, items: p.charges })),
      now,
      bind,
    ),
  ];
  if (records.length > 0) ctes.push(`idempotency AS (${idempotencyRecordsSql(records, now, bind)})`);
  const rows = await queryPrepared<{ charged: string[] }>(
    tx,
    `WITH ${ctes.join(',\n')}
     SELECT ARRAY(SELECT key_id FROM charged) AS charged`,
    parameters,
  );
  // The endpoints' owners are woken once the transaction commits.
  wakeEndpoints(
    tx,
    deliveries.map((d) => d.delivery.endpointId),
  );
  return new Set(rows[0]?.charged ?? []);
}

/** Pending deliveries per endpoint and shard, in endpoint ID order. */
function endpointCounters(plans: readonly AdmissionPlan[]): { endpointId: string; shard: number; pending: number }[] {
  const counts = new Map<string, { endpointId: string; shard: number; pending: number }>();
  for (const plan of plans)
    for (const delivery of plan.deliveries) {
      const key = `${delivery.endpointId}\u0000${plan.shard}`;
      const seen = counts.get(key);
      if (seen) seen.pending += 1;
      else counts.set(key, { endpointId: delivery.endpointId, shard: plan.shard, pending: 1 });
    }
  return [...counts.values()].sort((a, b) => compare(a.endpointId, b.endpointId) || a.shard - b.shard);
}

/** Pending deliveries and stored bytes per team and shard, in team ID order. */
function teamCounters(
  plans: readonly AdmissionPlan[],
): { teamId: string; shard: number; pending: number; contentBytes: number }[] {
  const counts = new Map<string, { teamId: string; shard: number; pending: number; contentBytes: number }>();
  for (const plan of plans) {
    const key = `${plan.teamId}\u0000${plan.shard}`;
    const seen = counts.get(key) ?? { teamId: plan.teamId, shard: plan.shard, pending: 0, contentBytes: 0 };
    seen.pending += plan.deliveries.length;
    seen.contentBytes += plan.storedBytes;
    counts.set(key, seen);
  }
  return [...counts.values()].sort((a, b) => compare(a.teamId, b.teamId) || a.shard - b.shard);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
