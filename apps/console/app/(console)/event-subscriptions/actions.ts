'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isInteger, isObject, isStringArray } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import {
  createSubscription,
  deleteSubscription,
  retryDelivery,
  rotateSubscriptionSecret,
  sendTestEvent,
  updateSubscription,
} from './subscription.api';
import type { Subscription, SubscriptionInput, SubscriptionReveal } from './subscription.types';

function checkInput(input: unknown): ActionResult<never> | SubscriptionInput {
  if (!isObject(input)) return invalidArgument('body', 'the subscription must be an object');
  const { url, events, environmentIds, description, format } = input;
  if (typeof url !== 'string') return invalidArgument('url', 'url must be a string');
  if (!isStringArray(events)) return invalidArgument('events', 'events must be a list of names');
  if (!isStringArray(environmentIds)) return invalidArgument('environment_ids', 'environment_ids must be a list');
  if (typeof description !== 'string') return invalidArgument('description', 'description must be a string');
  if (typeof format !== 'string') return invalidArgument('format', 'format must be a string');
  return { url, events, environmentIds, description, format };
}

export async function createSubscriptionAction(
  input: SubscriptionInput,
  idempotencyKey: string,
): Promise<ActionResult<SubscriptionReveal>> {
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  const checked = checkInput(input);
  if ('ok' in checked) return checked;
  return toActionResult(() => createSubscription(checked, idempotencyKey));
}

export async function updateSubscriptionAction(
  id: string,
  etag: string,
  input: SubscriptionInput,
): Promise<ActionResult<Subscription>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  const checked = checkInput(input);
  if ('ok' in checked) return checked;
  return toActionResult(() => updateSubscription(id, etag, checked));
}

export async function setSubscriptionEnabledAction(
  id: string,
  etag: string,
  enabled: boolean,
): Promise<ActionResult<Subscription>> {
  if (typeof id !== 'string' || typeof etag !== 'string' || typeof enabled !== 'boolean')
    return invalidArgument('enabled', 'id, etag and enabled are required');
  return toActionResult(() => updateSubscription(id, etag, { enabled }));
}

export async function deleteSubscriptionAction(id: string, etag: string): Promise<ActionResult<true>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  return toActionResult(async () => {
    await deleteSubscription(id, etag);
    return true as const;
  });
}

export async function rotateSubscriptionSecretAction(
  id: string,
  etag: string,
  overlapSeconds: number,
  idempotencyKey: string,
): Promise<ActionResult<SubscriptionReveal>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  if (!isInteger(overlapSeconds)) return invalidArgument('overlap_seconds', 'overlap_seconds must be an integer');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => rotateSubscriptionSecret(id, etag, overlapSeconds, idempotencyKey));
}

export async function sendTestEventAction(id: string): Promise<ActionResult<{ eventId: string }>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  return toActionResult(() => sendTestEvent(id));
}

export async function retryDeliveryAction(
  subscriptionId: string,
  deliveryId: string,
): Promise<ActionResult<{ id: string }>> {
  if (typeof subscriptionId !== 'string' || typeof deliveryId !== 'string')
    return invalidArgument('delivery_id', 'subscription and delivery IDs must be strings');
  return toActionResult(() => retryDelivery(subscriptionId, deliveryId));
}
