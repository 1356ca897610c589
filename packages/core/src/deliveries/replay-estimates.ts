import type { EntityManager } from 'typeorm';
import { formatUsd, METERS } from '../catalog/catalog.js';
import { laterGenerationsSql } from './repairs.js';

/** The meter a replayed generation is charged on. */
export const DELIVERY_METER = METERS.find((m) => m.id === 'webhooks.delivery_16k')!;

const unitsSql = (column: string) => `GREATEST(1, ceil(${column}::numeric / ${DELIVERY_METER.unitBytes}))::bigint`;

/** The window and event type a replay takes its dead letters from. */
export interface ReplaySelection {
  teamId: string;
  endpointId: string;
  window: { after: Date; before: Date };
  eventType: string | null;
}

/**
 * The dead letters a replay takes: the endpoint's failed and expired deliveries created in the window (optionally
 * of one event type), each the latest generation of its message to the endpoint (a dead letter already replayed
 * is taken through its newest generation only, so a message is sent once per replay). `available`: the content
 * can still be sent (not redacted, not past retention).
 */
const CANDIDATES = `
  FROM deliveries d
  JOIN messages m ON m.id = d.message_id
  JOIN tenants t ON t.id = m.tenant_id
  LEFT JOIN team_settings s ON s.team_id = d.team_id
 WHERE d.endpoint_id = $1 AND d.team_id = $2 AND d.status IN ('failed', 'expired')
   AND d.created_at >= $3 AND d.created_at < $4
   AND ($5::text IS NULL OR d.event_type = $5)
   AND NOT EXISTS (SELECT 1 FROM ${laterGenerationsSql('d')})`;
const AVAILABLE = `(m.redacted_at IS NULL AND m.content_erased_at IS NULL
   AND message_retained_until(m.retained_until, m.created_at, m.expires_at, s.payload_retention_days, t.deleted_at) > $6)`;

/** $1 to $6 of CANDIDATES and AVAILABLE. */
function candidateParameters(selection: ReplaySelection, now: Date): unknown[] {
  const { endpointId, teamId, window, eventType } = selection;
  return [endpointId, teamId, window.after, window.before, eventType, now];
}

/** One dead letter a replay batch looks at. */
export interface Candidate {
  id: string;
  tenant_id: string;
  message_id: string;
  endpoint_id: string;
  event_type: string;
  generation: number;
  content_type: string;
  body: Buffer | null;
  body_bytes: number;
  created_at: Date;
  available: boolean;
}

/** The next `limit` dead letters of a replay after its cursor, oldest first. */
export async function readCandidates(
  tx: EntityManager,
  selection: ReplaySelection,
  cursor: { createdAt: Date | null; id: string | null },
  limit: number,
  now: Date,
): Promise<Candidate[]> {
  return tx.query(
    `SELECT d.id, d.tenant_id, d.message_id, d.endpoint_id, d.event_type, d.generation, d.content_type, d.body,
            d.body_bytes, d.created_at, ${AVAILABLE} AS available
       ${CANDIDATES}
        AND ($7::timestamptz IS NULL OR (d.created_at, d.id) > ($7::timestamptz, $8::text))
      ORDER BY d.created_at, d.id
      LIMIT $9`,
    [...candidateParameters(selection, now), cursor.createdAt, cursor.id, limit],
  );
}

/** What a replay would match now: its dead letters, those whose content can still be sent, and their units. */
export async function estimateReplay(
  tx: EntityManager,
  selection: ReplaySelection,
  now: Date,
): Promise<{ matched: number; available: number; units: bigint }> {
  const [row]: { matched: number; available: number; units: string | null }[] = await tx.query(
    `SELECT count(*)::int AS matched, count(*) FILTER (WHERE ${AVAILABLE})::int AS available,
            sum(${unitsSql('d.body_bytes')}) FILTER (WHERE ${AVAILABLE}) AS units
       ${CANDIDATES}`,
    candidateParameters(selection, now),
  );
  return { matched: row!.matched, available: row!.available, units: BigInt(row!.units ?? '0') };
}

/** How far max_cost_usd reaches, oldest first (as the replay goes). */
export async function withinMaxCost(
  tx: EntityManager,
  selection: ReplaySelection,
  maxCost: bigint | null,
  estimate: { available: number; units: bigint },
  now: Date,
): Promise<{ deliveries: number; cost_usd: string }> {
  const all = {
    deliveries: estimate.available,
    cost_usd: formatUsd(estimate.units * DELIVERY_METER.unitPriceMicros),
  };
  if (maxCost === null) return all;
  const [row]: { deliveries: number; units: string | null }[] = await tx.query(
    `SELECT count(*)::int AS deliveries, max(running) AS units FROM (
       SELECT sum(${unitsSql('d.body_bytes')}) OVER (ORDER BY d.created_at, d.id) AS running
         ${CANDIDATES} AND ${AVAILABLE}) x
      WHERE running * $7 <= $8`,
    [...candidateParameters(selection, now), DELIVERY_METER.unitPriceMicros.toString(), maxCost.toString()],
  );
  return {
    deliveries: row!.deliveries,
    cost_usd: formatUsd(BigInt(row!.units ?? '0') * DELIVERY_METER.unitPriceMicros),
  };
}
