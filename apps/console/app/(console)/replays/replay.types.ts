import type { ReplayEstimateQuery, ReplayFieldsFragment, ReplaysQuery } from '@/gql/graphql';

/** A replay's progress; succeeded, failed and pending are live counts of the generations it created. */
export type ReplayCounts = ReplayFieldsFragment['counts'];

export type ReplayCostEstimate = ReplayFieldsFragment['estimate'];

export type ReplayStatus = 'running' | 'delivering' | 'completed' | 'failed' | 'canceled';

/** A bulk replay of one endpoint's failed and expired deliveries of a window. */
export type Replay = ReplayFieldsFragment;

export type ReplayPage = ReplaysQuery['replays'];

/** What a replay would match and cost now; nothing is stored or charged. */
export type ReplayEstimate = ReplayEstimateQuery['replayEstimate'];

/** What the replay dialog sends; empty values are left out (the API's defaults: the last 30 days, no bound). */
export interface ReplaySelection {
  endpointId: string;
  /** API timestamps (RFC 3339) or ''. */
  createdAfter: string;
  createdBefore: string;
  eventType: string;
  /** Exact decimal USD or ''. */
  maxCostUsd: string;
}

/** The API fields of a replay selection, so refusals show next to their inputs. */
export const REPLAY_SELECTION_FIELDS = ['created_after', 'created_before', 'event_type', 'max_cost_usd'] as const;

export const REPLAYS_PAGE_SIZE = 50;

/** While creating or delivering a replay changes on its own. */
export function isActiveReplay(status: string): boolean {
  return status === 'running' || status === 'delivering';
}

/**
 * Nothing left to change: creation is over and every generation created has finished (a canceled or failed
 * replay stops creating at once, but the deliveries it created still run).
 */
export function isSettledReplay(replay: Pick<Replay, 'status' | 'counts'>): boolean {
  return !isActiveReplay(replay.status) && replay.counts.pending === 0;
}

/** How a replay ended, named by what happened to its deliveries, not only by its status. */
export interface ReplayOutcome {
  /** What the badge says: the status, or "completed with failures" when some of its deliveries failed. */
  label: string;
  /** succeeded, partly_failed, all_failed or the status: what the colour stands for. */
  kind: string;
  color: string;
}

const STATUS_COLORS: Record<string, string> = {
  running: 'blue',
  delivering: 'cyan',
  completed: 'green',
  failed: 'red',
  canceled: 'gray',
};

/**
 * A completed replay whose deliveries all failed is no success: its status stays the API's `completed` (creation
 * finished), but the badge says "completed with failures", red when nothing arrived and orange when some did.
 */
export function replayOutcome(replay: Pick<Replay, 'status' | 'counts'>): ReplayOutcome {
  const { status, counts } = replay;
  if (status !== 'completed' || counts.failed === 0)
    return { label: status, kind: status, color: STATUS_COLORS[status] ?? 'gray' };
  return counts.succeeded === 0
    ? { label: 'completed with failures', kind: 'all_failed', color: 'red' }
    : { label: 'completed with failures', kind: 'partly_failed', color: 'orange' };
}

export const REASON_TEXT: Record<string, string> = {
  max_cost_reached: 'creation stopped before the cost would pass the bound',
  spending_limit: "creation stopped at the paying key's monthly spending limit",
  billing_required: 'the team has no payment card',
  endpoint_deleted: 'the endpoint was deleted',
  endpoint_disabled: 'the endpoint was disabled',
  canceled: 'canceled: no more deliveries were created',
};
