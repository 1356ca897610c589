import { formatUsd } from '../catalog/catalog.js';
import type { ListScope } from '../common/paging.js';
import { DELIVERY_METER } from './replay-estimates.js';

export type ReplayStatus = 'running' | 'delivering' | 'completed' | 'failed' | 'canceled';

export interface ReplayRow {
  id: string;
  team_id: string;
  endpoint_id: string;
  tenant_id: string;
  event_type: string | null;
  window_after: Date;
  window_before: Date;
  max_cost_micros: string | null;
  paying_key_id: string;
  status: ReplayStatus;
  reason: string | null;
  matched: number;
  estimate_deliveries: number;
  estimate_units: string;
  created_count: number;
  skipped: number;
  cost_micros: string;
  cursor_created_at: Date | null;
  cursor_id: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  /** Live counts of the replay's generations by outcome. */
  outcomes?: { succeeded: number; failed: number; pending: number } | null;
}

/** The Replay shape of the API (docs/replays.md). */
export interface ReplayView {
  id: string;
  endpoint_id: string;
  tenant_id: string;
  created_after: string;
  created_before: string;
  event_type: string | null;
  max_cost_usd: string | null;
  paying_key_id: string;
  status: ReplayStatus;
  /** Why creation stopped early or the replay failed: max_cost_reached, spending_limit, billing_required, endpoint_deleted, endpoint_disabled, canceled, job_failed. */
  reason: string | null;
  counts: { matched: number; created: number; skipped: number; succeeded: number; failed: number; pending: number };
  cost_usd: string;
  estimate: { deliveries: number; skipped: number; cost_usd: string };
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** POST /replays with dry_run: what a replay would match and cost now; nothing is stored. */
export interface ReplayEstimateView {
  dry_run: true;
  endpoint_id: string;
  created_after: string;
  created_before: string;
  event_type: string | null;
  max_cost_usd: string | null;
  matched: number;
  estimate: { deliveries: number; skipped: number; cost_usd: string };
  /** What the bound allows: deliveries and cost up to max_cost_usd (all of them without one). */
  within_max_cost: { deliveries: number; cost_usd: string };
}

/** A replay row `r` with the outcomes of the deliveries it created. */
export const REPLAY_COLUMNS = `
  r.*,
  (SELECT json_build_object(
            'succeeded', count(*) FILTER (WHERE status = 'succeeded'),
            'failed', count(*) FILTER (WHERE status IN ('failed', 'expired', 'canceled')),
            'pending', count(*) FILTER (WHERE status IN ('queued', 'in_flight', 'retry_wait')))
     FROM deliveries WHERE replay_id = r.id) AS outcomes`;

export const SELECT_REPLAY = `SELECT ${REPLAY_COLUMNS} FROM replays r`;

/** What a cursor of GET /replays is bound to. */
export function replayListScope(teamId: string, endpointId: string | null): ListScope {
  return { teamId, list: 'replays', filters: { endpoint_id: endpointId } };
}

/** One page of an endpoint's replays (GraphQL `Endpoint.replays`). */
export interface EndpointReplaysRequest {
  endpointId: string;
  limit?: unknown;
  cursor?: unknown;
}

export function toReplayView(row: ReplayRow): ReplayView {
  const outcomes = row.outcomes ?? { succeeded: 0, failed: 0, pending: 0 };
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    tenant_id: row.tenant_id,
    created_after: row.window_after.toISOString(),
    created_before: row.window_before.toISOString(),
    event_type: row.event_type,
    max_cost_usd: row.max_cost_micros === null ? null : formatUsd(BigInt(row.max_cost_micros)),
    paying_key_id: row.paying_key_id,
    status: row.status,
    reason: row.reason,
    counts: {
      matched: row.matched,
      created: row.created_count,
      skipped: row.skipped,
      succeeded: outcomes.succeeded,
      failed: outcomes.failed,
      pending: outcomes.pending,
    },
    cost_usd: formatUsd(BigInt(row.cost_micros)),
    estimate: {
      deliveries: row.estimate_deliveries,
      skipped: row.matched - row.estimate_deliveries,
      cost_usd: formatUsd(BigInt(row.estimate_units) * DELIVERY_METER.unitPriceMicros),
    },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}
