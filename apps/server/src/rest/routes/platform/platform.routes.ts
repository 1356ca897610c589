import { z } from 'zod';
import {
  CreateEnvironmentInput,
  CreateSubscriptionInput,
  ListPlatformEventsQuery,
  ListPlatformPageQuery,
  ListSubscriptionDeliveriesQuery,
  parseInput,
  PutFlagInput,
  RotateSubscriptionSecretInput,
  UpdateSubscriptionInput,
  type Actor,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteResult, type RouteSpec } from '../../route.js';
import { ErrorShape, listOf, queryOf } from '../../shapes.js';
import { PLATFORM_PREFIX } from '../discovery.js';
import {
  DeletedFlagShape,
  DeliveryShape,
  EnvironmentShape,
  FlagShape,
  PlatformEventShape,
  renderDelivery,
  renderEnvironment,
  renderFlag,
  renderPlatformEvent,
  renderSubscription,
  SubscriptionShape,
  SubscriptionWithSecretShape,
} from './platform.shapes.js';

const P = PLATFORM_PREFIX;
const EmptyBody = z.strictObject({});

/**
 * The platform API (spec/event-subscriptions.md, docs/platform.md) under {meta_url} = /v1/platform: feature-flag
 * environments and flags, event subscriptions, their deliveries and the team's events. Same pipeline and common
 * rules as the webhook API.
 */
export function platformRoutes(services: Services): RouteSpec[] {
  const { featureFlags, subscriptions, subscriptionHistory } = services;
  const withEtag = (view: { etag: string }) => ({ ETag: view.etag });
  const withoutSecret = (result: RouteResult) => {
    const { secret: _secret, ...rest } = result.body as { secret?: string };
    return rest;
  };
  /** A replay shows the secret only to the key that made it, while the subscription is still at that version. */
  const replayWithSecret = async (stored: Buffer, replay: { actor: Actor; sameKey: boolean }): Promise<Buffer> => {
    if (!replay.sameKey) return stored;
    const { id, version } = JSON.parse(stored.toString('utf8')) as { id: string; version: string };
    const secret = await subscriptions.secretForReplay({ actor: replay.actor }, id, version);
    if (secret === null) return stored;
    const text = stored.toString('utf8');
    return Buffer.from(`${text.slice(0, -1)},"secret":${JSON.stringify(secret)}}`, 'utf8');
  };
  const environmentList = listOf(EnvironmentShape, 'FeatureFlagEnvironmentList');
  const flagList = listOf(FlagShape, 'FeatureFlagList', 'in key order');
  const subscriptionList = listOf(SubscriptionShape, 'EventSubscriptionList');
  const deliveryList = listOf(DeliveryShape, 'SubscriptionDeliveryList', 'newest first (30 days)');
  const eventList = listOf(PlatformEventShape, 'PlatformEventList', 'newest first (30 days)');
  const conditional = { 404: ErrorShape, 412: ErrorShape, 422: ErrorShape } as const;

  return [
    defineRoute({
      operationId: 'createFeatureFlagEnvironment',
      summary: 'Create a feature-flag environment (keys restricted to some environments may not)',
      method: 'POST',
      path: `${P}/feature_flags/environments`,
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreateEnvironmentInput,
      responses: { 201: EnvironmentShape, 403: ErrorShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, input }) {
        const view = await featureFlags.createEnvironment(ctx, input);
        return { status: 201, body: renderEnvironment(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'listFeatureFlagEnvironments',
      summary: "List the team's feature-flag environments, oldest first",
      method: 'GET',
      path: `${P}/feature_flags/environments`,
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListPlatformPageQuery),
      responses: { 200: environmentList, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await featureFlags.listEnvironments(ctx, parseInput(ListPlatformPageQuery, query));
        return { status: 200, body: { data: page.data.map(renderEnvironment), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getFeatureFlagEnvironment',
      summary: 'Read a feature-flag environment and its revision',
      method: 'GET',
      path: `${P}/feature_flags/environments/:environment_id`,
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: EnvironmentShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        const view = await featureFlags.getEnvironment(ctx, params['environment_id']!);
        return { status: 200, body: renderEnvironment(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'listFeatureFlags',
      summary: "List an environment's flags in key order",
      method: 'GET',
      path: `${P}/feature_flags/environments/:environment_id/flags`,
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListPlatformPageQuery),
      responses: { 200: flagList, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params, query }) {
        const page = await featureFlags.listFlags(
          ctx,
          params['environment_id']!,
          parseInput(ListPlatformPageQuery, query),
        );
        return { status: 200, body: { data: page.data.map(renderFlag), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getFeatureFlag',
      summary: 'Read a flag (its ETag header is the If-Match for a change)',
      method: 'GET',
      path: `${P}/feature_flags/environments/:environment_id/flags/:flag_key`,
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: FlagShape, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params }) {
        const view = await featureFlags.getFlag(ctx, params['environment_id']!, params['flag_key']!);
        return { status: 200, body: renderFlag(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'putFeatureFlag',
      summary:
        'Create a flag (201, no If-Match) or replace it (200, If-Match required); each change raises the environment revision and writes a feature_flags.flag.updated event',
      method: 'PUT',
      path: `${P}/feature_flags/environments/:environment_id/flags/:flag_key`,
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      ifMatch: 'optional',
      comparesIfMatch: true,
      input: PutFlagInput,
      rawFields: ['value'],
      responses: { 200: FlagShape, 201: FlagShape, 403: ErrorShape, 409: ErrorShape, 428: ErrorShape, ...conditional },
      async handler({ ctx, params, ifMatch, input }) {
        const { flag, created } = await featureFlags.putFlag(
          ctx,
          params['environment_id']!,
          params['flag_key']!,
          ifMatch,
          input,
        );
        return { status: created ? 201 : 200, body: renderFlag(flag), headers: withEtag(flag) };
      },
    }),
    defineRoute({
      operationId: 'deleteFeatureFlag',
      summary: 'Delete a flag (If-Match); writes a feature_flags.flag.updated event with change deleted',
      method: 'DELETE',
      path: `${P}/feature_flags/environments/:environment_id/flags/:flag_key`,
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      responses: { 200: DeletedFlagShape, 403: ErrorShape, 428: ErrorShape, ...conditional },
      async handler({ ctx, params, ifMatch }) {
        const deleted = await featureFlags.deleteFlag(ctx, params['environment_id']!, params['flag_key']!, ifMatch);
        return {
          status: 200,
          body: {
            environment_id: deleted.environmentId,
            key: deleted.key,
            deleted: true,
            revision: deleted.revision,
          },
        };
      },
    }),
    defineRoute({
      operationId: 'createEventSubscription',
      summary: 'Subscribe a receiver to platform events (the secret is shown once; at most 20 active per team)',
      method: 'POST',
      path: `${P}/event_subscriptions`,
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreateSubscriptionInput,
      responses: { 201: SubscriptionWithSecretShape, 403: ErrorShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, input }) {
        const { subscription, secret } = await subscriptions.createSubscription(ctx, input);
        return { status: 201, body: renderSubscription(subscription, secret), headers: withEtag(subscription) };
      },
      storedBody: withoutSecret,
      replayBody: replayWithSecret,
    }),
    defineRoute({
      operationId: 'listEventSubscriptions',
      summary: "List the team's event subscriptions, oldest first (never their secrets)",
      method: 'GET',
      path: `${P}/event_subscriptions`,
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListPlatformPageQuery),
      responses: { 200: subscriptionList, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await subscriptions.listSubscriptions(ctx, parseInput(ListPlatformPageQuery, query));
        return {
          status: 200,
          body: { data: page.data.map((view) => renderSubscription(view)), next_cursor: page.nextCursor },
        };
      },
    }),
    defineRoute({
      operationId: 'getEventSubscription',
      summary: 'Read an event subscription (never its secret)',
      method: 'GET',
      path: `${P}/event_subscriptions/:endpoint_id`,
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: SubscriptionShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        const view = await subscriptions.getSubscription(ctx, params['endpoint_id']!);
        return { status: 200, body: renderSubscription(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'updateEventSubscription',
      summary: 'Change url, events, environment_ids, description, format or enabled (If-Match); a new version',
      method: 'PATCH',
      path: `${P}/event_subscriptions/:endpoint_id`,
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      input: UpdateSubscriptionInput,
      responses: { 200: SubscriptionShape, 403: ErrorShape, 409: ErrorShape, 428: ErrorShape, ...conditional },
      async handler({ ctx, params, ifMatch, input }) {
        const view = await subscriptions.updateSubscription(ctx, params['endpoint_id']!, ifMatch, input);
        return { status: 200, body: renderSubscription(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'deleteEventSubscription',
      summary: 'Delete an event subscription: pending deliveries are canceled, one in progress may complete',
      method: 'DELETE',
      path: `${P}/event_subscriptions/:endpoint_id`,
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: 'optional',
      responses: {
        200: z
          .strictObject({ id: z.string(), deleted: z.literal(true), in_flight_may_complete: z.boolean() })
          .meta({ id: 'DeletedEventSubscription' }),
        403: ErrorShape,
        ...conditional,
      },
      async handler({ ctx, params, ifMatch }) {
        const result = await subscriptions.deleteSubscription(ctx, params['endpoint_id']!, ifMatch);
        return {
          status: 200,
          body: { id: result.id, deleted: true, in_flight_may_complete: result.inFlightMayComplete },
        };
      },
    }),
    defineRoute({
      operationId: 'rotateEventSubscriptionSecret',
      summary: 'A new secret, shown once; the previous one keeps signing for overlap_seconds (default 86,400)',
      method: 'POST',
      path: `${P}/event_subscriptions/:endpoint_id/rotate_secret`,
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      ifMatch: 'optional',
      comparesIfMatch: true,
      input: RotateSubscriptionSecretInput,
      responses: { 200: SubscriptionWithSecretShape, 403: ErrorShape, 409: ErrorShape, ...conditional },
      async handler({ ctx, params, ifMatch, input }) {
        const { subscription, secret } = await subscriptions.rotateSecret(ctx, params['endpoint_id']!, ifMatch, input);
        return { status: 200, body: renderSubscription(subscription, secret), headers: withEtag(subscription) };
      },
      storedBody: withoutSecret,
      replayBody: replayWithSecret,
    }),
    defineRoute({
      operationId: 'testEventSubscription',
      summary: 'Queue a feature_flags.webhook.test event for this subscription (its data holds only endpoint_id)',
      method: 'POST',
      path: `${P}/event_subscriptions/:endpoint_id/test`,
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: EmptyBody,
      responses: {
        202: z
          .strictObject({ event_id: z.string().startsWith('evt_'), endpoint_id: z.string() })
          .meta({ id: 'QueuedTestEvent' }),
        403: ErrorShape,
        404: ErrorShape,
        409: ErrorShape,
        422: ErrorShape,
      },
      async handler({ ctx, params }) {
        const queued = await subscriptions.sendTestEvent(ctx, params['endpoint_id']!);
        return { status: 202, body: { event_id: queued.eventId, endpoint_id: queued.endpointId } };
      },
    }),
    defineRoute({
      operationId: 'listEventSubscriptionDeliveries',
      summary: "A subscription's deliveries with their attempts, newest first, 30 days",
      method: 'GET',
      path: `${P}/event_subscriptions/:endpoint_id/deliveries`,
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListSubscriptionDeliveriesQuery, {
        status: 'Only this status',
        event_id: 'Only deliveries of this event',
      }),
      responses: { 200: deliveryList, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params, query }) {
        const page = await subscriptionHistory.listDeliveries(
          ctx,
          params['endpoint_id']!,
          parseInput(ListSubscriptionDeliveriesQuery, query),
        );
        return { status: 200, body: { data: page.data.map(renderDelivery), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'retryEventSubscriptionDelivery',
      summary: "Queue a new delivery of the delivery's original event, attempted once now, outside the commit order",
      method: 'POST',
      path: `${P}/event_subscriptions/:endpoint_id/deliveries/:delivery_id/retry`,
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: EmptyBody,
      responses: {
        202: z
          .strictObject({ id: z.string().startsWith('whd_'), event_id: z.string().startsWith('evt_') })
          .meta({ id: 'QueuedDeliveryRetry' }),
        403: ErrorShape,
        404: ErrorShape,
        409: ErrorShape,
        422: ErrorShape,
      },
      async handler({ ctx, params }) {
        const queued = await subscriptionHistory.retryDelivery(ctx, params['endpoint_id']!, params['delivery_id']!);
        return { status: 202, body: { id: queued.id, event_id: queued.eventId } };
      },
    }),
    defineRoute({
      operationId: 'listPlatformEvents',
      summary: "The team's platform events, newest first, 30 days",
      method: 'GET',
      path: `${P}/events`,
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListPlatformEventsQuery, {
        type: 'Only events of this exact type',
        environment_id: 'Only events of this environment',
      }),
      responses: { 200: eventList, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await subscriptionHistory.listEvents(ctx, parseInput(ListPlatformEventsQuery, query));
        return { status: 200, body: { data: page.data.map(renderPlatformEvent), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getPlatformEvent',
      summary: 'Read a platform event (within its 30 days)',
      method: 'GET',
      path: `${P}/events/:event_id`,
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: PlatformEventShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        return { status: 200, body: renderPlatformEvent(await subscriptionHistory.getEvent(ctx, params['event_id']!)) };
      },
    }),
  ];
}
