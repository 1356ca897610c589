import { z } from 'zod';
import {
  RawJson,
  type EnvironmentView,
  type FlagView,
  type PlatformEventView,
  type SubscriptionDeliveryView,
  type SubscriptionView,
} from '@svc/core';
import { createdAt, decimalString, timestamp, updatedAt } from '../../shapes.js';

export const EnvironmentShape = z
  .strictObject({
    id: z.string().startsWith('ffe_').describe('Environment ID (ffe_...)'),
    name: z.string(),
    revision: decimalString.describe('Moves by one with every committed flag change in the environment'),
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .meta({ id: 'FeatureFlagEnvironment' });

export const FlagShape = z
  .strictObject({
    environment_id: z.string().startsWith('ffe_'),
    key: z.string().describe('1 to 128 letters, digits, _, . or -'),
    enabled: z.boolean(),
    description: z.string(),
    value: z.unknown().describe('The JSON value served when enabled, exactly as sent (minified)'),
    version: decimalString.describe('Moves by one with every change of this flag (the ETag basis)'),
    revision: decimalString.describe("The environment's revision at this flag's last change"),
    created_by: z.string().describe('The key that created the flag'),
    updated_by: z.string().describe('The key that last changed the flag'),
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .meta({ id: 'FeatureFlag' });

export const DeletedFlagShape = z
  .strictObject({
    environment_id: z.string(),
    key: z.string(),
    deleted: z.literal(true),
    revision: decimalString.describe('The environment revision of the deletion'),
  })
  .meta({ id: 'DeletedFeatureFlag' });

export const SubscriptionShape = z
  .strictObject({
    id: z.string().startsWith('whe_').describe('Subscription (endpoint) ID (whe_...)'),
    url: z.string(),
    events: z.array(z.string()).describe('feature_flags.flag.updated or feature_flags.*'),
    environment_ids: z.array(z.string()),
    description: z.string(),
    enabled: z.boolean(),
    disabled_reason: z
      .string()
      .nullable()
      .describe('disabled_by_user, endpoint_gone (a 410), chat_webhook_gone, or null while enabled'),
    format: z.enum(['svc', 'chat_a', 'chat_b', 'chat_c']),
    version: decimalString.describe('Moves by one with every change (the ETag basis)'),
    secret_rotation_ends_at: timestamp.nullable().describe('Until when the previous secret still signs, or null'),
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .meta({ id: 'EventSubscription' });

export const SubscriptionWithSecretShape = SubscriptionShape.extend({
  secret: z.string().startsWith('whsec_').describe('The signing secret, shown only now'),
}).meta({ id: 'EventSubscriptionWithSecret' });

export const AttemptShape = z
  .strictObject({
    id: z.string().startsWith('wha_'),
    attempt: z.number().int().describe('1 for the first attempt of the delivery'),
    attempted_at: timestamp,
    status_code: z.number().int().nullable().describe("The receiver's HTTP status; null when none came"),
    error_kind: z
      .enum(['http_status', 'timeout', 'network_error', 'tls_error', 'unsafe_destination'])
      .nullable()
      .describe('null when the receiver acknowledged'),
    error: z.string().nullable().describe('A short reason, never a secret'),
    duration_ms: z.number().int(),
  })
  .meta({ id: 'SubscriptionDeliveryAttempt' });

export const DeliveryShape = z
  .strictObject({
    id: z.string().startsWith('whd_'),
    endpoint_id: z.string().startsWith('whe_'),
    event_id: z.string().startsWith('evt_'),
    event_type: z.string(),
    sequence: decimalString.describe("The event's place in the subscription's commit order"),
    trigger: z.enum(['event', 'manual']).describe('manual: made by POST .../retry'),
    retry_of: z.string().nullable().describe('The delivery a manual retry repeats'),
    status: z.enum(['pending', 'succeeded', 'failed', 'canceled']),
    ordered: z.boolean().describe('Holds its place in the commit order (later events wait while it is pending)'),
    attempt_count: z.number().int(),
    next_attempt_at: timestamp
      .nullable()
      .describe('When it goes next; null when done or while an earlier event of the subscription is pending'),
    released_at: timestamp.nullable().describe('When it stepped out of the order after blocking for 24 hours'),
    attempts: z.array(AttemptShape),
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .meta({ id: 'SubscriptionDelivery' });

export const PlatformEventShape = z
  .strictObject({
    id: z.string().startsWith('evt_'),
    type: z.string(),
    created_at: timestamp,
    team_id: z.string().startsWith('team_'),
    environment_id: z.string().nullable(),
    revision: decimalString.nullable(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'PlatformEvent' });

export function renderEnvironment(view: EnvironmentView) {
  return {
    id: view.id,
    name: view.name,
    revision: view.revision,
    created_at: view.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
  };
}

export function renderFlag(view: FlagView) {
  return {
    environment_id: view.environmentId,
    key: view.key,
    enabled: view.enabled,
    description: view.description,
    value: view.value satisfies RawJson,
    version: view.version,
    revision: view.revision,
    created_by: view.createdBy,
    updated_by: view.updatedBy,
    created_at: view.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
  };
}

export function renderSubscription(view: SubscriptionView, secret?: string) {
  return {
    id: view.id,
    url: view.url,
    events: view.events,
    environment_ids: view.environmentIds,
    description: view.description,
    enabled: view.enabled,
    disabled_reason: view.disabledReason,
    format: view.format,
    version: view.version,
    secret_rotation_ends_at: view.secretRotationEndsAt?.toISOString() ?? null,
    created_at: view.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
    ...(secret === undefined ? {} : { secret }),
  };
}

export function renderDelivery(view: SubscriptionDeliveryView) {
  return {
    id: view.id,
    endpoint_id: view.subscriptionId,
    event_id: view.eventId,
    event_type: view.eventType,
    sequence: view.sequence,
    trigger: view.trigger,
    retry_of: view.retryOf,
    status: view.status,
    ordered: view.ordered,
    attempt_count: view.attemptCount,
    next_attempt_at: view.nextAttemptAt?.toISOString() ?? null,
    released_at: view.releasedAt?.toISOString() ?? null,
    attempts: view.attempts.map((a) => ({
      id: a.id,
      attempt: a.attempt,
      attempted_at: a.attemptedAt.toISOString(),
      status_code: a.statusCode,
      error_kind: a.errorKind,
      error: a.error,
      duration_ms: a.durationMs,
    })),
    created_at: view.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
  };
}

export function renderPlatformEvent(view: PlatformEventView) {
  return {
    id: view.id,
    type: view.type,
    created_at: view.createdAt.toISOString(),
    team_id: view.teamId,
    environment_id: view.environmentId,
    revision: view.revision,
    data: view.data,
  };
}
