'use server';

import { ReplayConfiguration as ReplayConfigurations } from '@/gql/enums';
import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isStringArray } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { ApiFailure } from '@/lib/graphql.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import { quoteReplays, replayDelivery, retryDeliveryNow } from './delivery.api';
import type { Delivery, ReplayConfiguration, ReplayOutcome, ReplayQuote } from './delivery.types';

const CONFIGURATIONS: readonly unknown[] = Object.values(ReplayConfigurations);

function isConfiguration(value: unknown): value is ReplayConfiguration {
  return CONFIGURATIONS.includes(value);
}

/** How many deliveries one selection may hold is the API's rule (a quote prices a bounded number): it answers. */
function isSelection(value: unknown): value is string[] {
  return isStringArray(value) && value.length > 0;
}

export async function quoteReplaysAction(
  deliveryIds: string[],
  configuration: ReplayConfiguration,
): Promise<ActionResult<ReplayQuote>> {
  if (!isSelection(deliveryIds)) return invalidArgument('delivery_ids', 'pick at least one delivery');
  if (!isConfiguration(configuration)) return invalidArgument('configuration', 'configuration is frozen or current');
  return toActionResult(() => quoteReplays(deliveryIds, configuration));
}

/**
 * Replays each delivery in turn. Each gets its own idempotency key, derived from the confirmation's key, so
 * confirming again after a lost answer returns the replays already made instead of paying for them twice.
 */
export async function replayDeliveriesAction(
  deliveryIds: string[],
  configuration: ReplayConfiguration,
  idempotencyKey: string,
): Promise<ActionResult<ReplayOutcome[]>> {
  if (!isSelection(deliveryIds)) return invalidArgument('delivery_ids', 'pick at least one delivery');
  if (!isConfiguration(configuration)) return invalidArgument('configuration', 'configuration is frozen or current');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  // The quote holds the selection to the API's own bound before anything is paid for.
  const quoted = await toActionResult(() => quoteReplays(deliveryIds, configuration));
  if (!quoted.ok) return quoted;
  const outcomes: ReplayOutcome[] = [];
  for (const deliveryId of deliveryIds) {
    try {
      const replay = await replayDelivery(deliveryId, configuration, `${idempotencyKey}:${deliveryId}`);
      outcomes.push({ deliveryId, ok: true, replay });
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      outcomes.push({ deliveryId, ok: false, code: error.error.code, message: error.error.message });
    }
  }
  return { ok: true, data: outcomes };
}

export async function retryDeliveryNowAction(id: string, idempotencyKey: string): Promise<ActionResult<Delivery>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => retryDeliveryNow(id, idempotencyKey));
}
