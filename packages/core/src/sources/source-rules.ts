import { invalidField, ServiceError } from '../common/errors.js';
import { parseVerification } from './verifiers/index.js';

/** The billing key a source names is not one that can pay for it. */
export function billingKeyRefused(): ServiceError {
  return invalidField(
    'billing_key_id',
    'billing_key_id must be an active secret key of the team that may use webhooks',
  );
}

/** The mapped event type is not active in the team's catalog. */
export function inactiveEventType(eventType: string): ServiceError {
  return new ServiceError('invalid_event_type', `event type ${eventType} is not active in the catalog`, {
    field: 'event_type',
  });
}

/** PATCH verification: the kind's settings in full; the kind cannot change and the secret changes by rotation. */
export function settingsUpdate(kind: string, raw: Record<string, unknown>): Record<string, unknown> {
  if ('secret' in raw)
    throw invalidField('verification.secret', 'change the secret with POST /sources/{id}/rotate_secret');
  if ('kind' in raw && raw['kind'] !== kind)
    throw invalidField('verification.kind', 'the kind of a source cannot change; create another source');
  const { kind: _kind, ...settings } = raw;
  return parseVerification({ kind, ...settings }).settings as Record<string, unknown>;
}

export function withoutKind(verification: Record<string, unknown>): Record<string, unknown> {
  const { kind: _kind, ...rest } = verification;
  return rest;
}

/** Exactly one of event_type and event_type_path; a prefix only with a path. */
export function checkMapping(input: {
  event_type?: string | null;
  event_type_path?: string | null;
  event_type_prefix?: string | null;
}): { eventType: string | null; eventTypePath: string | null; eventTypePrefix: string | null } {
  const eventType = input.event_type ?? null;
  const eventTypePath = input.event_type_path ?? null;
  const eventTypePrefix = input.event_type_prefix ?? null;
  if ((eventType === null) === (eventTypePath === null))
    throw invalidField(
      eventType === null ? 'event_type' : 'event_type_path',
      'give exactly one of event_type and event_type_path',
    );
  if (eventTypePrefix !== null && eventTypePath === null)
    throw invalidField('event_type_prefix', 'event_type_prefix goes with event_type_path');
  return { eventType, eventTypePath, eventTypePrefix };
}
