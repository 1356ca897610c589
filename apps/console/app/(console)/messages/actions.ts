'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isNullableString, isObject, isStringRecord } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import {
  cancelMessage,
  getMessage,
  getMessageInspection,
  publishMessage,
  redactMessage,
  sendTestMessage,
} from './message.api';
import type {
  CancelMessageResult,
  Message,
  MessageInspection,
  PublishMessageInput,
  RedactMessageResult,
} from './message.types';

export async function publishMessageAction(
  input: PublishMessageInput,
  idempotencyKey: string,
): Promise<ActionResult<Message>> {
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  if (!isObject(input)) return invalidArgument('body', 'the message must be an object');
  const { tenantId, eventType, payload, externalId, metadata } = input;
  if (typeof tenantId !== 'string') return invalidArgument('tenant_id', 'tenant_id must be a string');
  if (typeof eventType !== 'string') return invalidArgument('event_type', 'event_type must be a string');
  if (typeof payload !== 'string') return invalidArgument('payload', 'payload must be JSON text');
  if (!isNullableString(externalId)) return invalidArgument('external_id', 'external_id must be text or null');
  if (!isStringRecord(metadata)) return invalidArgument('metadata', 'metadata must map keys to text');
  return toActionResult(() => publishMessage({ tenantId, eventType, payload, externalId, metadata }, idempotencyKey));
}

/** The message as it is now (the detail page and the endpoint test poll this until the status is final). */
export async function getMessageAction(id: string): Promise<ActionResult<Message>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  return toActionResult(() => getMessage(id));
}

export async function sendTestMessageAction(
  endpointId: string,
  payload: string,
  idempotencyKey: string,
): Promise<ActionResult<Message>> {
  if (typeof endpointId !== 'string') return invalidArgument('id', 'id must be a string');
  if (typeof payload !== 'string') return invalidArgument('payload', 'payload must be JSON text');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => sendTestMessage(endpointId, payload, idempotencyKey));
}

/** The message with its deliveries and attempts as they are now (the message page polls this). */
export async function getMessageInspectionAction(id: string): Promise<ActionResult<MessageInspection>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  return toActionResult(() => getMessageInspection(id));
}

export async function cancelMessageAction(
  id: string,
  idempotencyKey: string,
): Promise<ActionResult<CancelMessageResult>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => cancelMessage(id, idempotencyKey));
}

export async function redactMessageAction(
  id: string,
  idempotencyKey: string,
): Promise<ActionResult<RedactMessageResult>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => redactMessage(id, idempotencyKey));
}
