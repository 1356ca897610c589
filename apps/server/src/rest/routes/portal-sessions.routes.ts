import { z } from 'zod';
import {
  CreatePortalSessionInput,
  formatUsd,
  ListPortalSessionsQuery,
  parseInput,
  PORTAL_CAPABILITIES,
  type PortalSessionView,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { createdAt, ErrorShape, listOf, queryOf, timestamp } from '../shapes.js';

export const PortalSessionShape = z
  .strictObject({
    id: z.string().startsWith('wdp_').describe('Portal session ID (wdp_...)'),
    tenant_id: z.string().startsWith('wdt_'),
    capabilities: z.enum(PORTAL_CAPABILITIES).describe('read_only, or manage_endpoints (also retry and replay)'),
    event_types: z
      .array(z.string())
      .nullable()
      .describe('The event types the tenant sees and may subscribe to; null: every active one'),
    branding: z.strictObject({
      display_name: z.string().nullable(),
      accent_color: z.string().nullable().describe('#rrggbb'),
      logo_url: z.string().nullable().describe('An https URL'),
    }),
    spending_cap_usd: z
      .string()
      .describe('What test events and replays from this session may cost in all (USD, a decimal string)'),
    spent_usd: z.string().describe('What its test events and replays have cost so far'),
    status: z
      .enum(['active', 'expired', 'revoked', 'ended'])
      .describe('ended: its tenant was deleted or the key that created it revoked'),
    created_at: createdAt,
    expires_at: timestamp,
    opened_at: timestamp.nullable().describe('When the one-time link was opened (null: not yet)'),
    revoked_at: timestamp.nullable(),
    last_seen_at: timestamp.nullable(),
  })
  .meta({ id: 'PortalSession', description: "A tenant's session of the receivers' portal (docs/portal.md)" });

const IssuedPortalSessionShape = PortalSessionShape.extend({
  url: z
    .string()
    .nullable()
    .describe('The one-time link to hand to the tenant; null in an idempotent replay (the link is shown once)'),
}).meta({ id: 'IssuedPortalSession', description: 'A new portal session with its one-time link' });

const PortalSessionListShape = listOf(PortalSessionShape, 'PortalSessionList');

export function renderPortalSession(session: PortalSessionView): z.infer<typeof PortalSessionShape> {
  return {
    id: session.id,
    tenant_id: session.tenantId,
    capabilities: session.capabilities,
    event_types: session.eventTypes,
    branding: {
      display_name: session.branding.displayName,
      accent_color: session.branding.accentColor,
      logo_url: session.branding.logoUrl,
    },
    spending_cap_usd: formatUsd(session.spendingCapMicros),
    spent_usd: formatUsd(session.spentMicros),
    status: session.status,
    created_at: session.createdAt.toISOString(),
    expires_at: session.expiresAt.toISOString(),
    opened_at: session.openedAt?.toISOString() ?? null,
    revoked_at: session.revokedAt?.toISOString() ?? null,
    last_seen_at: session.lastSeenAt?.toISOString() ?? null,
  };
}

/** Extension routes (docs/api-choices.md, docs/portal.md): an operator's portal sessions of a tenant. */
export function portalSessionRoutes(services: Services): RouteSpec[] {
  const { portalSessions } = services;
  return [
    defineRoute({
      operationId: 'createPortalSession',
      summary: "Create a receivers' portal session for a tenant; the answer holds its one-time link",
      method: 'POST',
      path: '/tenants/:id/portal_sessions',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreatePortalSessionInput,
      responses: { 201: IssuedPortalSessionShape, 404: ErrorShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params, input }) {
        const issued = await portalSessions.createSession(ctx, params['id']!, input);
        return { status: 201, body: { ...renderPortalSession(issued.session), url: issued.url } };
      },
      // The one-time link is never stored with the idempotency record.
      storedBody: (result) => ({ ...(result.body as Record<string, unknown>), url: null }),
    }),
    defineRoute({
      operationId: 'listPortalSessions',
      summary: "List a tenant's portal sessions, oldest first, ended ones included",
      method: 'GET',
      path: '/tenants/:id/portal_sessions',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListPortalSessionsQuery),
      responses: { 200: PortalSessionListShape, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params, query }) {
        const page = await portalSessions.listSessions(ctx, params['id']!, parseInput(ListPortalSessionsQuery, query));
        return { status: 200, body: { data: page.data.map(renderPortalSession), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'revokePortalSession',
      summary: 'End a portal session at once (the portal then says the session has ended)',
      method: 'POST',
      path: '/tenants/:id/portal_sessions/:session_id/revoke',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: z.strictObject({}),
      responses: { 200: PortalSessionShape, 404: ErrorShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params }) {
        const session = await portalSessions.revokeSession(ctx, params['id']!, params['session_id']!);
        return { status: 200, body: renderPortalSession(session) };
      },
    }),
  ];
}
