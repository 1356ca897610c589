/** A replay's progress; succeeded, failed and pending are live counts of the generations it created. */
export interface ReplayCounts {
  /** Dead letters in the window when the replay started. */
  matched: number;
  /** New delivery generations created so far. */
  created: number;
  /** Dead letters whose content is redacted or past retention: never sent again. */
  skipped: number;
  succeeded: number;
  /** Generations that failed, expired or were canceled. */
  failed: number;
  pending: number;
}

export interface ReplayCostEstimate {
  /** Dead letters whose content can still be sent. */
  deliveries: number;
  skipped: number;
  costUsd: string;
}

export type ReplayStatus = 'running' | 'delivering' | 'completed' | 'failed' | 'canceled';

/** A bulk replay of one endpoint's failed and expired deliveries of a window. */
export interface Replay {
  id: string;
  endpointId: string;
  tenantId: string;
  /** Inclusive. */
  createdAfter: string;
  /** Exclusive. */
  createdBefore: string;
  eventType: string | null;
  maxCostUsd: string | null;
  payingKeyId: string;
  /** running (creating generations), delivering (all created), then completed, failed or canceled. */
  status: string;
  /** Why creation stopped early or the replay failed (max_cost_reached, spending_limit, ...). */
  reason: string | null;
  counts: ReplayCounts;
  /** Charged so far. */
  costUsd: string;
  /** The estimate when the replay started. */
  estimate: ReplayCostEstimate;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export interface ReplayPage {
  nodes: Replay[];
  nextCursor: string | null;
}

/** What a replay would match and cost now; nothing is stored or charged. */
export interface ReplayEstimate {
  endpointId: string;
  createdAfter: string;
  createdBefore: string;
  eventType: string | null;
  maxCostUsd: string | null;
  /** Dead letters in the window. */
  matched: number;
  estimate: ReplayCostEstimate;
  /** How far maxCostUsd reaches, oldest dead letter first (everything without a bound). */
  withinMaxCost: { deliveries: number; costUsd: string };
}

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

export const REASON_TEXT: Record<string, string> = {
  max_cost_reached: 'creation stopped before the cost would pass the bound',
  spending_limit: "creation stopped at the paying key's monthly spending limit",
  billing_required: 'the team has no payment card',
  endpoint_deleted: 'the endpoint was deleted',
  endpoint_disabled: 'the endpoint was disabled',
  canceled: 'canceled: no more deliveries were created',
};
