import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import {
  REPLAYS_PAGE_SIZE,
  type Replay,
  type ReplayEstimate,
  type ReplayPage,
  type ReplaySelection,
} from './replay.types';

const REPLAY_FIELDS = `id endpointId tenantId createdAfter createdBefore eventType maxCostUsd payingKeyId status reason
  counts { matched created skipped succeeded failed pending } costUsd estimate { deliveries skipped costUsd }
  createdAt updatedAt finishedAt`;

/** The selection's non-empty members: the API treats an explicit null as a value to check. */
function selectionArguments(selection: ReplaySelection): Record<string, string> {
  return Object.fromEntries(Object.entries(selection).filter(([, value]) => value !== ''));
}

/** Replays of the team, or of one endpoint, oldest first. */
export async function listReplays(
  endpointId: string | null,
  page: { after: string | null; first?: number },
): Promise<ReplayPage> {
  const data = await consoleRequest<{ replays: ReplayPage }>(
    `query Replays($endpointId: ID, $first: Int, $after: String) {
      replays(endpointId: $endpointId, first: $first, after: $after) { nodes { ${REPLAY_FIELDS} } nextCursor }
    }`,
    {
      first: page.first ?? REPLAYS_PAGE_SIZE,
      ...(endpointId ? { endpointId } : {}),
      ...(page.after ? { after: page.after } : {}),
    },
  );
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
  const data = await consoleRequest<{ replay: Replay }>(
    `query Replay($id: ID!) { replay(id: $id) { ${REPLAY_FIELDS} } }`,
    {
      id,
    },
  );
  return data.replay;
}

/** What starting this replay would match and cost now; nothing is stored or charged. */
export async function estimateReplay(selection: ReplaySelection): Promise<ReplayEstimate> {
  const data = await consoleRequest<{ replayEstimate: ReplayEstimate }>(
    `query ReplayEstimate($endpointId: ID!, $createdAfter: DateTimeISO, $createdBefore: DateTimeISO,
        $eventType: String, $maxCostUsd: String) {
      replayEstimate(endpointId: $endpointId, createdAfter: $createdAfter, createdBefore: $createdBefore,
          eventType: $eventType, maxCostUsd: $maxCostUsd) {
        endpointId createdAfter createdBefore eventType maxCostUsd matched
        estimate { deliveries skipped costUsd } withinMaxCost { deliveries costUsd }
      }
    }`,
    selectionArguments(selection),
  );
  return data.replayEstimate;
}

/** Starts the replay, paid by the session's key; `idempotencyKey` makes a resubmit return the first replay. */
export async function startReplay(selection: ReplaySelection, idempotencyKey: string | null): Promise<Replay> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ startReplay: Replay }>(
    `mutation StartReplay($input: StartReplayInput!${idem.declaration}) {
      startReplay(input: $input${idem.argument}) { ${REPLAY_FIELDS} }
    }`,
    { input: selectionArguments(selection), ...idem.variables },
  );
  return data.startReplay;
}

/** No more generations are created; those created run. */
export async function cancelReplay(id: string, idempotencyKey: string | null): Promise<Replay> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ cancelReplay: Replay }>(
    `mutation CancelReplay($id: ID!${idem.declaration}) {
      cancelReplay(id: $id${idem.argument}) { ${REPLAY_FIELDS} }
    }`,
    { id, ...idem.variables },
  );
  return data.cancelReplay;
}
