import { z } from 'zod';
import {
  ListOperationalEventsQuery,
  OPERATIONAL_EVENT_TYPES,
  parseInput,
  type OperationalEventView,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { ErrorShape, queryOf, timestamp } from '../shapes.js';

export const OperationalEventShape = z
  .strictObject({
    id: z.string().startsWith('wdv_').describe('Event ID (wdv_...)'),
    type: z.enum(OPERATIONAL_EVENT_TYPES),
    created_at: timestamp.describe('When the first occurrence happened (UTC)'),
    mode: z.literal('live'),
    resource_id: z.string().describe('The resource of the first occurrence (a delivery, endpoint, source or replay)'),
    tenant_id: z.string().startsWith('wdt_'),
    resource_version: z
      .string()
      .regex(/^\d+$/)
      .describe('The resource version when the event happened; "0" for resources without versions'),
    data: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .describe("The first occurrence's IDs, reasons and counts, by type (docs/events.md); never payloads or URLs"),
    coalesced: z.boolean().describe('Whether later occurrences were folded into this event'),
    count: z.number().int().min(1).describe('Occurrences folded into this event (1 when not coalesced)'),
    first_id: z.string().describe('Resource ID of the first occurrence (equal to resource_id)'),
    last_id: z.string().describe('Resource ID of the last occurrence folded in'),
  })
  .meta({
    id: 'OperationalEvent',
    description: 'Something that happened to deliveries, endpoints, sources or replays; kept 30 days',
  });

const OperationalEventListShape = z
  .strictObject({
    data: z
      .array(OperationalEventShape)
      .describe('Events in commit order (oldest first), or the other way with order=newest'),
    next_cursor: z
      .string()
      .nullable()
      .describe(
        'Where this page ended: poll again with it for later events, null only when the page is empty. With ' +
          'order=newest: the next (older) page, null on the last',
      ),
  })
  .meta({ id: 'OperationalEventList' });

export function renderOperationalEvent(event: OperationalEventView): z.infer<typeof OperationalEventShape> {
  return {
    id: event.id,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    mode: 'live',
    resource_id: event.resourceId,
    tenant_id: event.tenantId,
    resource_version: event.resourceVersion,
    data: event.data,
    coalesced: event.coalesced,
    count: event.count,
    first_id: event.firstId,
    last_id: event.lastId,
  };
}

export function eventRoutes(services: Services): RouteSpec[] {
  const { events } = services;
  return [
    defineRoute({
      operationId: 'listEvents',
      summary: 'Poll operational events of the last 30 days, oldest first (or read them newest first)',
      method: 'GET',
      path: '/events',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListOperationalEventsQuery, {
        type: 'Only events of this type',
        resource_id: 'Only events of this resource (also the first or last of a coalesced event)',
        tenant_id: "Only this tenant's events",
      }),
      responses: { 200: OperationalEventListShape, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await events.listEvents(ctx, parseInput(ListOperationalEventsQuery, query));
        return { status: 200, body: { data: page.data.map(renderOperationalEvent), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getEvent',
      summary: 'Read an operational event of the last 30 days',
      method: 'GET',
      path: '/events/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: OperationalEventShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        const event = await events.getEvent(ctx, params['id']!);
        return { status: 200, body: renderOperationalEvent(event) };
      },
    }),
  ];
}
