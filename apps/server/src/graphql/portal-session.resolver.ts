import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import {
  CreatePortalSessionInput as CreatePortalSessionSchema,
  formatUsd,
  isPortalLinkToken,
  parseInput,
  portalTokenOf,
  ServiceError,
  type PortalSessionView,
} from '@svc/core';
import { PORTAL, PUBLIC } from './authorization.js';
import { callContext, type GraphqlContext } from './context.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined } from './mappers.js';
import {
  CreatePortalSessionInput,
  IssuedPortalSession,
  OpenedPortalSession,
  PortalContext,
  PortalLinkPreview,
  PortalSession,
  PortalSessionConnection,
} from './portal.types.js';

export function toPortalSession(view: PortalSessionView): PortalSession {
  return {
    id: view.id,
    tenantId: view.tenantId,
    capabilities: view.capabilities,
    eventTypes: view.eventTypes,
    branding: { ...view.branding },
    spendingCapUsd: formatUsd(view.spendingCapMicros),
    spentUsd: formatUsd(view.spentMicros),
    status: view.status,
    createdAt: view.createdAt,
    expiresAt: view.expiresAt,
    openedAt: view.openedAt,
    revokedAt: view.revokedAt,
    lastSeenAt: view.lastSeenAt,
  };
}

/** The operator's portal sessions (key), opening a link (public) and the portal's own session (portal). */
@Resolver()
export class PortalSessionResolver {
  @Authorized()
  @Mutation(() => IssuedPortalSession, { description: "Creates a receivers' portal session for a tenant" })
  async createPortalSession(
    @Ctx() context: GraphqlContext,
    @Arg('tenantId', () => ID) tenantId: string,
    @Arg('input', () => CreatePortalSessionInput, { nullable: true }) input?: CreatePortalSessionInput | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<IssuedPortalSession> {
    const branding = input?.branding;
    const parsed = parseInput(
      CreatePortalSessionSchema,
      defined({
        expires_in_seconds: input?.expiresInSeconds ?? undefined,
        capabilities: input?.capabilities ?? undefined,
        event_types: input?.eventTypes ?? undefined,
        spending_cap_usd: input?.spendingCapUsd ?? undefined,
        branding: branding
          ? defined({
              display_name: branding.displayName ?? undefined,
              accent_color: branding.accentColor ?? undefined,
              logo_url: branding.logoUrl ?? undefined,
            })
          : undefined,
      }),
    );
    return runIdempotent<IssuedPortalSession>(context, idempotencyKey, {
      operation: 'createPortalSession',
      params: { tenantId },
      input: parsed,
      async run(ctx) {
        const issued = await context.services.portalSessions.createSession(ctx, tenantId, parsed);
        return { session: toPortalSession(issued.session), url: issued.url };
      },
      // The one-time link is never kept with the idempotency record.
      stored: (issued) => ({ sessionId: issued.session.id }),
      async replay(stored, { ctx }) {
        const { sessionId } = stored as { sessionId: string };
        const session = await context.services.portalSessions.getSession(ctx, tenantId, sessionId);
        return { session: toPortalSession(session), url: null };
      },
    });
  }

  @Authorized()
  @Query(() => PortalSessionConnection, { description: "A tenant's portal sessions, oldest first" })
  async portalSessions(
    @Ctx() context: GraphqlContext,
    @Arg('tenantId', () => ID) tenantId: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<PortalSessionConnection> {
    const page = await context.services.portalSessions.listSessions(callContext(context), tenantId, {
      limit: first ?? undefined,
      cursor: after ?? undefined,
    });
    return { nodes: page.data.map(toPortalSession), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Mutation(() => PortalSession, { description: 'Ends a portal session at once' })
  async revokePortalSession(
    @Ctx() context: GraphqlContext,
    @Arg('tenantId', () => ID) tenantId: string,
    @Arg('id', () => ID) id: string,
  ): Promise<PortalSession> {
    return toPortalSession(await context.services.portalSessions.revokeSession(callContext(context), tenantId, id));
  }

  // Public: the one-time link token is the credential, checked inside (401 once used, expired or revoked). Reading
  // it uses nothing: the console's page shows this and opens the link only when its button is pressed.
  @Authorized(PUBLIC)
  @Query(() => PortalLinkPreview, {
    description: 'What the page of a one-time portal link shows before it is opened; does not use the link',
  })
  async portalLink(
    @Ctx() context: GraphqlContext,
    @Arg('linkToken', () => String) linkToken: string,
  ): Promise<PortalLinkPreview> {
    // Reading uses nothing of the link's buckets (a page may be shown many times before its button is pressed): an
    // operation of public fields only is held to the per-address limit of work no team pays for (public-limits.ts).
    return context.services.portalSessions.previewLink(linkToken);
  }

  // Public: the one-time link token is the credential, checked inside (401 once used, expired or revoked).
  @Authorized(PUBLIC)
  @Mutation(() => OpenedPortalSession, { description: 'Exchanges a one-time portal link token for a session token' })
  async openPortalSession(
    @Ctx() context: GraphqlContext,
    @Arg('linkToken', () => String) linkToken: string,
  ): Promise<OpenedPortalSession> {
    const { portalSessions } = context.services;
    // A malformed token is refused (as an ended link) before anything is spent on it; then the address's, the
    // token's and the installation's buckets (public-limits.ts), so one client cannot stop everyone's links.
    if (isPortalLinkToken(linkToken)) await context.publicLimits.take('portalOpen', context.clientAddress, linkToken);
    const opened = await portalSessions.openSession(linkToken);
    const actor = await portalSessions.authenticate(opened.token);
    return { ...opened, frameOrigins: await portalSessions.frameOrigins(actor.teamId) };
  }

  // Public: holding the token is the authority to end it (sign-out of an ended session is harmless).
  @Authorized(PUBLIC)
  @Mutation(() => Boolean, { description: 'Ends the portal session whose token authorizes this request' })
  async endPortalSession(@Ctx() context: GraphqlContext): Promise<boolean> {
    const token = portalTokenOf(context.authorization);
    if (token === null)
      throw new ServiceError('unauthorized', 'send the portal session token as Authorization: Bearer svc_ps_...');
    await context.services.portalSessions.endSession(token);
    return true;
  }

  @Authorized(PORTAL)
  @Query(() => PortalContext, { description: "The portal's own session: branding, capabilities, its tenant's name" })
  async portalContext(@Ctx() context: GraphqlContext): Promise<PortalContext> {
    const info = await context.services.portalSessions.describeSession(callContext(context));
    return { session: toPortalSession(info.session), tenantName: info.tenantName, frameOrigins: info.frameOrigins };
  }
}
