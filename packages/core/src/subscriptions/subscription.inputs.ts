import { z } from 'zod';
import { boundedText, receiverUrl } from '../common/validation.js';
import { SUBSCRIBABLE_EVENTS } from './platform-events.js';

export const SUBSCRIPTION_FORMATS = ['svc', 'chat_a', 'chat_b', 'chat_c'] as const;
export type SubscriptionFormat = (typeof SUBSCRIPTION_FORMATS)[number];
export const MAX_ACTIVE_SUBSCRIPTIONS = 20;
export const MAX_SUBSCRIPTION_ENVIRONMENTS = 50;

const environmentId = z.string().regex(/^ffe_[0-9a-z]{26}$/, 'must be an environment ID (ffe_...)');

const events = z
  .array(z.enum(SUBSCRIBABLE_EVENTS, { message: `must be one of ${SUBSCRIBABLE_EVENTS.join(', ')}` }))
  .min(1, 'must name at least one event')
  .max(SUBSCRIBABLE_EVENTS.length)
  .refine((names) => new Set(names).size === names.length, { message: 'must not repeat an event' })
  .meta({ uniqueItems: true });

const environmentIds = z
  .array(environmentId)
  .min(1, 'must name at least one environment')
  .max(MAX_SUBSCRIPTION_ENVIRONMENTS)
  .refine((ids) => new Set(ids).size === ids.length, { message: 'must not repeat an environment' })
  .meta({ uniqueItems: true });

/** POST /event_subscriptions. */
export const CreateSubscriptionInput = z.strictObject({
  url: receiverUrl,
  events,
  environment_ids: environmentIds,
  description: boundedText(0, 1024).default(''),
  format: z.enum(SUBSCRIPTION_FORMATS).default('svc'),
});
export type CreateSubscriptionInput = z.output<typeof CreateSubscriptionInput>;

/** PATCH /event_subscriptions/{id}: every field but the secret (rotate_secret changes that). */
export const UpdateSubscriptionInput = z.strictObject({
  url: receiverUrl.optional(),
  events: events.optional(),
  environment_ids: environmentIds.optional(),
  description: boundedText(0, 1024).optional(),
  format: z.enum(SUBSCRIPTION_FORMATS).optional(),
  enabled: z.boolean().optional(),
});
export type UpdateSubscriptionInput = z.output<typeof UpdateSubscriptionInput>;

/** POST /event_subscriptions/{id}/rotate_secret: the old secret keeps signing for overlap_seconds. */
export const RotateSubscriptionSecretInput = z.strictObject({
  overlap_seconds: z.number().int().min(0).max(86_400).default(86_400),
});
export type RotateSubscriptionSecretInput = z.output<typeof RotateSubscriptionSecretInput>;

export const ListSubscriptionDeliveriesQuery = z.strictObject({
  status: z.enum(['pending', 'succeeded', 'failed', 'canceled']).optional(),
  event_id: z
    .string()
    .regex(/^evt_[0-9a-z]{26}$/, 'must be an event ID (evt_...)')
    .optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListSubscriptionDeliveriesQuery = z.output<typeof ListSubscriptionDeliveriesQuery>;

export const ListPlatformEventsQuery = z.strictObject({
  type: z.string().min(1).max(128).optional(),
  environment_id: environmentId.optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListPlatformEventsQuery = z.output<typeof ListPlatformEventsQuery>;
