import 'server-only';
import { graphql } from '@/gql';
import type { StartReplayInput } from '@/gql/graphql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  REPLAYS_PAGE_SIZE,
  type Replay,
  type ReplayEstimate,
  type ReplayPage,
  type ReplaySelection,
} from './replay.types';

graphql(`
  fragment ReplayFields on Replay {
    id
    endpointId
    tenantId
    createdAfter
    createdBefore
    eventType
    maxCostUsd
    payingKeyId
    status
    reason
    counts {
      matched
      created
      skipped
      succeeded
      failed
      pending
    }
    costUsd
    estimate {
      deliveries
      skipped
      costUsd
    }
    createdAt
    updatedAt
    finishedAt
  }
`);

const ReplaysQuery = graphql(`
  query Replays($endpointId: ID, $first: Int, $after: String) {
    replays(endpointId: $endpointId, first: $first, after: $after) {
      nodes {
        ...ReplayFields
      }
      nextCursor
    }
  }
`);

const ReplayQuery = graphql(`
  query Replay($id: ID!) {
    replay(id: $id) {
      ...ReplayFields
    }
  }
`);

const ReplayEstimateQuery = graphql(`
  query ReplayEstimate(
    $endpointId: ID!
    $createdAfter: DateTimeISO
    $createdBefore: DateTimeISO
    $eventType: String
    $maxCostUsd: String
  ) {
    replayEstimate(
      endpointId: $endpointId
      createdAfter: $createdAfter
      createdBefore: $createdBefore
      eventType: $eventType
      maxCostUsd: $maxCostUsd
    ) {
      endpointId
      createdAfter
      createdBefore
      eventType
      maxCostUsd
      matched
      estimate {
        deliveries
        skipped
        costUsd
      }
      withinMaxCost {
        deliveries
        costUsd
      }
    }
  }
`);

const StartReplayMutation = graphql(`
  mutation StartReplay($input: StartReplayInput!, $idempotencyKey: String) {
    startReplay(input: $input, idempotencyKey: $idempotencyKey) {
      ...ReplayFields
    }
  }
`);

const CancelReplayMutation = graphql(`
  mutation CancelReplay($id: ID!, $idempotencyKey: String) {
    cancelReplay(id: $id, idempotencyKey: $idempotencyKey) {
      ...ReplayFields
    }
  }
`);

/** The selection's non-empty members: the API treats an explicit null as a value to check. */
function selectionArguments({ endpointId, ...rest }: ReplaySelection): StartReplayInput {
  return { endpointId, ...Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== '')) };
}

/** Replays of the team, or of one endpoint, oldest first. */
export async function listReplays(
  endpointId: string | null,
  page: { after: string | null; first?: number },
): Promise<ReplayPage> {
  const data = await consoleRequest(ReplaysQuery, {
    first: page.first ?? REPLAYS_PAGE_SIZE,
    ...(endpointId ? { endpointId } : {}),
    ...(page.after ? { after: page.after } : {}),
  });
  return data.replays;
}

/** How many of an endpoint's replays its page reads, to show the newest. */
const ENDPOINT_REPLAYS_CAP = 1000;

/** The endpoint's newest replays, newest first (the list is oldest first, so it is read to its end). */
export async function listNewestEndpointReplays(
  endpointId: string,
  count: number,
): Promise<{ replays: Replay[]; total: number }> {
  let newest: Replay[] = [];
  let total = 0;
  let after: string | null = null;
  do {
    const page: ReplayPage = await listReplays(endpointId, { after, first: 200 });
    total += page.nodes.length;
    newest = [...newest, ...page.nodes].slice(-count);
    after = page.nextCursor;
  } while (after !== null && total < ENDPOINT_REPLAYS_CAP);
  return { replays: newest.reverse(), total };
}

export async function getReplay(id: string): Promise<Replay> {
  const data = await consoleRequest(ReplayQuery, {
    id,
  });
  return data.replay;
}

/** What starting this replay would match and cost now; nothing is stored or charged. */
export async function estimateReplay(selection: ReplaySelection): Promise<ReplayEstimate> {
  const data = await consoleRequest(ReplayEstimateQuery, selectionArguments(selection));
  return data.replayEstimate;
}

/** Starts the replay, paid by the session's key; `idempotencyKey` makes a resubmit return the first replay. */
export async function startReplay(selection: ReplaySelection, idempotencyKey: string | null): Promise<Replay> {
  const data = await consoleRequest(StartReplayMutation, {
    input: selectionArguments(selection),
    ...idempotencyVariable(idempotencyKey),
  });
  return data.startReplay;
}

/** No more generations are created; those created run. */
export async function cancelReplay(id: string, idempotencyKey: string | null): Promise<Replay> {
  const data = await consoleRequest(CancelReplayMutation, { id, ...idempotencyVariable(idempotencyKey) });
  return data.cancelReplay;
}
