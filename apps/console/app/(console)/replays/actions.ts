'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isObject } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import { cancelReplay, estimateReplay, getReplay, startReplay } from './replay.api';
import type { Replay, ReplayEstimate, ReplaySelection } from './replay.types';

const SELECTION_MEMBERS = ['endpointId', 'createdAfter', 'createdBefore', 'eventType', 'maxCostUsd'] as const;

/** Server actions are public endpoints: only a selection of strings goes on to the API, which checks the rest. */
function isSelection(value: unknown): value is ReplaySelection {
  return isObject(value) && SELECTION_MEMBERS.every((member) => typeof value[member] === 'string');
}

export async function estimateReplayAction(selection: ReplaySelection): Promise<ActionResult<ReplayEstimate>> {
  if (!isSelection(selection)) return invalidArgument('body', 'the replay selection is malformed');
  return toActionResult(() => estimateReplay(selection));
}

export async function startReplayAction(
  selection: ReplaySelection,
  idempotencyKey: string,
): Promise<ActionResult<Replay>> {
  if (!isSelection(selection)) return invalidArgument('body', 'the replay selection is malformed');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => startReplay(selection, idempotencyKey));
}

/** The replay as it is now (its page polls this while it runs or delivers). */
export async function getReplayAction(id: string): Promise<ActionResult<Replay>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  return toActionResult(() => getReplay(id));
}

export async function cancelReplayAction(id: string, idempotencyKey: string): Promise<ActionResult<Replay>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => cancelReplay(id, idempotencyKey));
}
