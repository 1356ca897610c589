import type { EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import { wakeEndpoints } from '../engine/wake-endpoints.js';
import { SETTLEMENT_SHARDS } from './delivery-records.js';
import { orderedNumbering, sequenceCtes } from './ordering.js';
import { deliveriesCreatedFactSql } from '../analytics/analytics-facts.js';

/** A new delivery generation of a finished delivery (a single replay or one of a bulk replay's batch). */
export interface NewGeneration {
  replayOf: string;
  tenantId: string;
  messageId: string;
  endpointId: string;
  eventType: string;
  generation: number;
  contentType: string;
  /** The frozen bytes when they differ from the message content; null for the content as accepted. */
  body: Buffer | null;
  bodyBytes: number;
  units: number;
}

/**
 * Inserts replay generations in one statement with the queue counters and their analytics facts (a replay
 * generation counts as a delivery when it is created), queues them (delivery_queue) and wakes their
 * endpoints' owners at commit. They are due now, get a window of their own, and are paid by `payingKeyId` (the caller charges
 * them, last in its transaction). Returns the new delivery IDs, in order.
 */
export async function insertGenerations(
  tx: EntityManager,
  deps: { clock: Clock },
  generations: readonly NewGeneration[],
  options: { teamId: string; payingKeyId: string; replayId: string | null; windowMs: number },
): Promise<string[]> {
  if (generations.length === 0) return [];
  const now = deps.clock.now();
  const ids = generations.map(() => newId('delivery', deps.clock));
  const shard = SETTLEMENT_SHARDS[Math.floor(Math.random() * SETTLEMENT_SHARDS.length)]!;
  const perEndpoint = new Map<string, number>();
  for (const g of generations) perEndpoint.set(g.endpointId, (perEndpoint.get(g.endpointId) ?? 0) + 1);
  const endpoints = [...perEndpoint.keys()].sort();
  const storedBytes = generations.reduce((sum, g) => sum + (g.body?.length ?? 0), 0);
  await tx.query(
    // A replay to an ordered endpoint takes the next numbers, as admission does: it goes through the same order,
    // behind what already waits (docs/delivery.md, "Ordered endpoints").
    `WITH ${sequenceCtes('$18::text[]', '$19::int[]').join(',\n')},
     delivery AS (
       INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, generation, replay_of,
                               replay_id, status, next_attempt_at, expires_at, body, body_bytes, content_type,
                               delivery_units, paying_key_id, sequence, created_at, updated_at)
       SELECT x.id, $1, x.tenant_id, x.message_id, x.endpoint_id, x.event_type, x.generation, x.replay_of, $2,
              'queued', $3, $4, x.body, x.body_bytes, x.content_type, x.units, $5, seq.first + x.rank - 1, $3, $3
         FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[],
                     $13::bytea[], $14::int[], $15::text[], $16::int[], $22::int[])
              AS x(id, tenant_id, message_id, endpoint_id, event_type, generation, replay_of, body, body_bytes,
                   content_type, units, rank)
         LEFT JOIN seq ON seq.endpoint_id = x.endpoint_id
       RETURNING id, team_id, tenant_id, endpoint_id, message_id, sequence, created_at),
     queue AS (
       INSERT INTO delivery_queue (delivery_id, endpoint_id, due_at, expires_at, sequence)
       SELECT d.id, d.endpoint_id, $3, $4, d.sequence FROM delivery d),
     facts AS (${deliveriesCreatedFactSql('delivery')}),
     endpoint_counts AS (
       INSERT INTO endpoint_queue_counts AS q (endpoint_id, shard, pending)
       SELECT x.endpoint_id, $17, x.n FROM unnest($18::text[], $19::int[]) WITH ORDINALITY AS x(endpoint_id, n, i)
        ORDER BY x.i
       ON CONFLICT (endpoint_id, shard) DO UPDATE SET pending = q.pending + EXCLUDED.pending)
     INSERT INTO team_queue_counts AS t (team_id, shard, pending, content_bytes)
     SELECT $1, $17, $20, $21
     ON CONFLICT (team_id, shard) DO UPDATE
       SET pending = t.pending + EXCLUDED.pending, content_bytes = t.content_bytes + EXCLUDED.content_bytes`,
    [
      options.teamId,
      options.replayId,
      now,
      new Date(now.getTime() + options.windowMs),
      options.payingKeyId,
      ids,
      generations.map((g) => g.tenantId),
      generations.map((g) => g.messageId),
      generations.map((g) => g.endpointId),
      generations.map((g) => g.eventType),
      generations.map((g) => g.generation),
      generations.map((g) => g.replayOf),
      generations.map((g) => g.body),
      generations.map((g) => g.bodyBytes),
      generations.map((g) => g.contentType),
      generations.map((g) => g.units),
      shard,
      endpoints,
      endpoints.map((id) => perEndpoint.get(id)!),
      generations.length,
      storedBytes,
      orderedNumbering(generations.map((g) => g.endpointId)).ranks,
    ],
  );
  wakeEndpoints(tx, endpoints);
  return ids;
}
