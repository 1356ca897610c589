import { z } from 'zod';
import {
  CreateEventTypeInput,
  ListEventTypesQuery,
  parseInput,
  RawJson,
  UpdateEventTypeInput,
  type EventTypeView,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { createdAt, ErrorShape, listOf, queryOf, updatedAt, versionField } from '../shapes.js';

export const EventTypeShape = z
  .strictObject({
    id: z.string().startsWith('wdy_').describe('Event type ID (wdy_...)'),
    name: z.string().describe('Lowercase words separated by dots, e.g. invoice.paid'),
    description: z.string(),
    example: z.unknown().describe('An example payload, exactly as written, or null'),
    archived: z.boolean().describe('Archived types refuse new messages'),
    version: versionField,
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .meta({ id: 'EventType', description: 'An entry of the event type catalog' });

const EventTypeListShape = listOf(EventTypeShape, 'EventTypeList');

export function renderEventType(eventType: EventTypeView) {
  return {
    id: eventType.id,
    name: eventType.name,
    description: eventType.description,
    example: eventType.example === null ? null : new RawJson(eventType.example),
    archived: eventType.archived,
    version: eventType.version,
    created_at: eventType.createdAt.toISOString(),
    updated_at: eventType.updatedAt.toISOString(),
  };
}

const RAW_FIELDS = ['example'] as const;

export function eventTypeRoutes(services: Services): RouteSpec[] {
  const { eventTypes } = services;
  const withEtag = (eventType: EventTypeView) => ({ ETag: eventType.etag });
  return [
    defineRoute({
      operationId: 'createEventType',
      summary: 'Add an event type to the catalog',
      method: 'POST',
      path: '/event_types',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreateEventTypeInput,
      rawFields: RAW_FIELDS,
      responses: { 201: EventTypeShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, input }) {
        const eventType = await eventTypes.createEventType(ctx, input);
        return { status: 201, body: renderEventType(eventType), headers: withEtag(eventType) };
      },
    }),
    defineRoute({
      operationId: 'listEventTypes',
      summary: 'List event types, oldest first, archived ones included',
      method: 'GET',
      path: '/event_types',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListEventTypesQuery, { name: 'Only the event type with this name' }),
      responses: { 200: EventTypeListShape, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await eventTypes.listEventTypes(ctx, parseInput(ListEventTypesQuery, query));
        return { status: 200, body: { data: page.data.map(renderEventType), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getEventType',
      summary: 'Read an event type',
      method: 'GET',
      path: '/event_types/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: EventTypeShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        const eventType = await eventTypes.getEventType(ctx, params['id']!);
        return { status: 200, body: renderEventType(eventType), headers: withEtag(eventType) };
      },
    }),
    defineRoute({
      operationId: 'updateEventType',
      summary: 'Change the description or example, or unarchive (archived: false)',
      method: 'PATCH',
      path: '/event_types/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      input: UpdateEventTypeInput,
      rawFields: RAW_FIELDS,
      responses: { 200: EventTypeShape, 404: ErrorShape, 412: ErrorShape, 422: ErrorShape, 428: ErrorShape },
      async handler({ ctx, params, ifMatch, input }) {
        const eventType = await eventTypes.updateEventType(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: renderEventType(eventType), headers: withEtag(eventType) };
      },
    }),
    defineRoute({
      operationId: 'archiveEventType',
      summary: 'Archive an event type: new messages of the type are refused',
      method: 'DELETE',
      path: '/event_types/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      responses: { 204: null, 404: ErrorShape, 412: ErrorShape, 422: ErrorShape, 428: ErrorShape },
      async handler({ ctx, params, ifMatch }) {
        await eventTypes.archiveEventType(ctx, params['id']!, ifMatch);
        return { status: 204 };
      },
    }),
  ];
}
