import type { EntityManager } from 'typeorm';
import { wakeEndpoints } from '../engine/wake-endpoints.js';
import type { EngineEvent } from './engine-events.js';

// Ordered endpoints (docs/delivery.md, "Ordered endpoints"): an endpoint with `ordering: "ordered"` gets its
// deliveries one at a time, in the order they were admitted. Admission and replays number them in their own
// transaction from endpoint_sequences; the claim takes only the lowest number waiting (dispatch.service.ts).

/**
 * Each delivery's place among a batch's deliveries to its endpoint (1, 2, ...), in batch order, and the batch's
 * endpoints (ID order) with their delivery counts: an ordered endpoint's numbers are its first number plus the place.
 * A delivery `scheduled` for later gets no place (null): it is numbered when it comes due (numberWaiting), so on an
 * ordered endpoint it goes in the order it became deliverable and never holds back what was due before it.
 */
export function orderedNumbering(
  endpointIds: readonly string[],
  scheduled: readonly boolean[] = [],
): {
  ranks: (number | null)[];
  endpoints: string[];
  counts: number[];
} {
  const seen = new Map<string, number>();
  const ranks = endpointIds.map((id, i) => {
    if (scheduled[i]) return null;
    const rank = (seen.get(id) ?? 0) + 1;
    seen.set(id, rank);
    return rank;
  });
  const endpoints = [...seen.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { ranks, endpoints, counts: endpoints.map((id) => seen.get(id)!) };
}

/**
 * Two CTEs, `seq_lock` and `seq` (endpoint_id, first): the first number each ordered endpoint of the batch takes.
 * The sequence rows are locked in endpoint ID order (as every statement that moves per-endpoint counters does) and
 * held until commit, so numbers follow commit order: a transaction that numbers after another commits after it.
 * An endpoint that does not order has no row with `ordered`: one index probe, no lock, and a null number.
 */
export function sequenceCtes(endpoints: string, counts: string): string[] {
  return [
    `seq_lock AS (
       SELECT s.endpoint_id FROM endpoint_sequences s
        WHERE s.endpoint_id = ANY(${endpoints}) AND s.ordered
        ORDER BY s.endpoint_id FOR UPDATE)`,
    `seq AS (
       UPDATE endpoint_sequences s SET next_sequence = s.next_sequence + c.n
         FROM unnest(${endpoints}, ${counts}) AS c(endpoint_id, n)
        WHERE s.endpoint_id = c.endpoint_id AND s.endpoint_id IN (SELECT endpoint_id FROM seq_lock)
       RETURNING s.endpoint_id, s.next_sequence - c.n AS first)`,
  ];
}

/**
 * Turns ordering on or off for an endpoint, in the transaction that changes its configuration. On: the deliveries
 * waiting at that moment get the next numbers in the order they became due (then by ID), so they go first, one at a
 * time. Off: numbers already given stay (and are still sent), new deliveries get none; the counter row stays so a
 * later switch back on never restarts at 1.
 */
export async function setOrdering(tx: EntityManager, endpointId: string, ordered: boolean, now: Date): Promise<void> {
  await tx.query(
    `INSERT INTO endpoint_sequences (endpoint_id, ordered) VALUES ($1, $2)
     ON CONFLICT (endpoint_id) DO UPDATE SET ordered = EXCLUDED.ordered`,
    [endpointId, ordered],
  );
  if (ordered) await numberWaiting(tx, [endpointId], now);
}

/**
 * Numbers the due deliveries of ordered endpoints that have none, after every numbered one, in due order. Called
 * when ordering is switched on, by the engine's housekeeping (every 2 s) for scheduled deliveries that came due (they
 * are numbered then, not at admission), and by the reconciliation sweep for a delivery admitted by a transaction that
 * began before the switch committed (it read the endpoint as not ordered). The endpoints' number rows are locked
 * first, so two workers never number one delivery twice. Answers how many it numbered.
 */
export async function numberWaiting(tx: EntityManager, endpointIds: readonly string[], now: Date): Promise<number> {
  await tx.query(
    `SELECT endpoint_id FROM endpoint_sequences WHERE endpoint_id = ANY($1::text[]) AND ordered
      ORDER BY endpoint_id FOR UPDATE`,
    [endpointIds],
  );
  const [rows]: [{ endpoint_id: string }[], number] = await tx.query(
    `WITH stray AS (
       SELECT q.delivery_id, q.endpoint_id,
              row_number() OVER (PARTITION BY q.endpoint_id ORDER BY q.due_at, q.delivery_id) AS rank
         FROM delivery_queue q
         JOIN endpoint_sequences s ON s.endpoint_id = q.endpoint_id AND s.ordered
        WHERE q.endpoint_id = ANY($1::text[]) AND q.sequence IS NULL AND q.due_at <= $2),
     counts AS (SELECT endpoint_id, count(*)::int AS n FROM stray GROUP BY endpoint_id),
     ${sequenceCtes('ARRAY(SELECT endpoint_id FROM counts ORDER BY endpoint_id)', 'ARRAY(SELECT n FROM counts ORDER BY endpoint_id)').join(',\n')},
     queued AS (
       UPDATE delivery_queue q SET sequence = seq.first + stray.rank - 1
         FROM stray JOIN seq ON seq.endpoint_id = stray.endpoint_id
        WHERE q.delivery_id = stray.delivery_id
       RETURNING q.delivery_id, q.endpoint_id, q.sequence)
     UPDATE deliveries d SET sequence = queued.sequence FROM queued WHERE d.id = queued.delivery_id
     RETURNING queued.endpoint_id`,
    [endpointIds, now],
  );
  if (rows.length > 0)
    wakeEndpoints(
      tx,
      rows.map((r) => r.endpoint_id),
    );
  return rows.length;
}

/** Ordered endpoints with due deliveries that have no number (for housekeeping and the reconciliation sweep). */
export async function endpointsWithStrayRows(tx: EntityManager, now: Date): Promise<string[]> {
  const rows: { endpoint_id: string }[] = await tx.query(
    `SELECT s.endpoint_id FROM endpoint_sequences s
      WHERE s.ordered
        AND EXISTS (SELECT 1 FROM delivery_queue q
                     WHERE q.endpoint_id = s.endpoint_id AND q.due_at <= $1 AND q.sequence IS NULL)
      LIMIT 100`,
    [now],
  );
  return rows.map((r) => r.endpoint_id);
}

/** A delivery that ended without success, as far as holding its endpoint is concerned. */
export interface EndedDelivery {
  deliveryId: string;
  messageId: string;
  endpointId: string;
  teamId: string;
  tenantId: string;
  status: 'failed' | 'expired';
  reason: string | null;
}

/**
 * The UPDATE that holds ordered endpoints with `ordering_on_failure: "hold"` (paused, so nothing behind the delivery
 * that ended is attempted: the claim reads the status), for the endpoints `ids` (text[], ID order) at `now`.
 * Answers `id, version` of each endpoint it held. A CTE of the statement that records finished deliveries, or a
 * statement of its own in settlement's failure transaction.
 */
export function holdSql(ids: string, now: string): string {
  return `UPDATE endpoints e SET status = 'paused', version = e.version + 1, updated_at = ${now}
           WHERE e.id = ANY(${ids}) AND e.ordering = 'ordered' AND e.ordering_on_failure = 'hold'
             AND e.status = 'enabled' AND e.deleted_at IS NULL
          RETURNING e.id, e.version`;
}

/** The first ended delivery of each endpoint, and the endpoints in ID order (the lock order of holdSql). */
export function holdCandidates(ended: readonly EndedDelivery[]): { ids: string[]; first: Map<string, EndedDelivery> } {
  const first = new Map<string, EndedDelivery>();
  for (const d of ended) if (!first.has(d.endpointId)) first.set(d.endpointId, d);
  return { ids: [...first.keys()].sort(), first };
}

/** The `webhooks.endpoint.held` events of the endpoints holdSql held. */
export function heldEvents(
  held: readonly { id: string; version: string }[],
  first: ReadonlyMap<string, EndedDelivery>,
): EngineEvent[] {
  return held.map((row) => {
    const d = first.get(row.id)!;
    return {
      type: 'webhooks.endpoint.held',
      teamId: d.teamId,
      tenantId: d.tenantId,
      resourceId: row.id,
      resourceVersion: String(row.version),
      data: {
        endpoint_id: row.id,
        delivery_id: d.deliveryId,
        message_id: d.messageId,
        delivery_status: d.status,
        reason: d.reason,
      },
    };
  });
}

/** holdSql as a statement of its own (settlement's failure transaction), with its events. */
export async function holdOrderedEndpoints(
  tx: EntityManager,
  ended: readonly EndedDelivery[],
  now: Date,
): Promise<EngineEvent[]> {
  if (ended.length === 0) return [];
  const { ids, first } = holdCandidates(ended);
  const [held]: [{ id: string; version: string }[], number] = await tx.query(holdSql('$1::text[]', '$2'), [ids, now]);
  return heldEvents(held, first);
}
