import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { addMs, MINUTE, SECOND, type Clock } from '../common/clock.js';
import type { Actor, CallContext } from '../common/context.js';
import { notFound, ServiceError } from '../common/errors.js';
import { isWellFormedId, newId } from '../common/ids.js';
import { decodeCursor, parseLimit, toPage, type ListScope, type Page, type PageRequest } from '../common/paging.js';
import { inTransaction, reader } from '../common/transaction.js';
import { parseUsd } from '../catalog/catalog.js';
import type { OperationalEventService } from '../events/operational-event.service.js';
import type { EventTypeService } from '../event-types/event-type.service.js';
import { hashKey } from '../teams/keys.js';
import type { TenantService } from '../tenants/tenant.service.js';
import type { CreatePortalSessionInput } from './portal-session.inputs.js';
import { toPortalSessionView, type PortalSessionRow, type PortalSessionView } from './portal-session.view.js';

/** The one-time link's token (in the portal URL) and the session's token (the portal's cookie). */
export const PORTAL_LINK_PREFIX = 'svc_pl_';
export const PORTAL_SESSION_PREFIX = 'svc_ps_';
const TOKEN_BODY = /^[A-Za-z0-9_-]{43}$/;
const LAST_SEEN_RESOLUTION_MS = MINUTE;

const isToken = (prefix: string, value: string) =>
  value.startsWith(prefix) && TOKEN_BODY.test(value.slice(prefix.length));
/** Whether a value has the shape of a one-time link token (a cheap check before anything is spent on it). */
export const isPortalLinkToken = (value: string) => isToken(PORTAL_LINK_PREFIX, value);
const newToken = (prefix: string) => prefix + randomBytes(32).toString('base64url');

/** The portal session token an Authorization header carries, or null. */
export function portalTokenOf(authorization: string | undefined): string | null {
  return /^Bearer (svc_ps_[^\s]+)$/.exec(authorization ?? '')?.[1] ?? null;
}

const ended = () => new ServiceError('unauthorized', 'the portal session has ended; ask for a new link');

export interface IssuedPortalSession {
  session: PortalSessionView;
  /** The one-time link's token: given once, only its hash is stored. */
  linkToken: string;
  /** The link to hand to the tenant: on the console's address (SVC_CONSOLE_URL), else a path on the console. */
  url: string;
}

/** Where the console opens a portal link (apps/console/app/(portal)/portal/open). */
export const PORTAL_OPEN_PATH = '/portal/open';

export interface OpenedPortalSession {
  /** The session's token (the portal's cookie): given once, only its hash is stored. */
  token: string;
  sessionId: string;
  expiresAt: Date;
}

/** A live session as the portal shows it: the session, its tenant's name and what it may be framed by. */
export interface PortalSessionInfo {
  session: PortalSessionView;
  tenantName: string;
  frameOrigins: string[];
}

/** `ended`: the tenant is deleted or the creating key no longer acts (revoked, or no longer a webhooks secret key). */
const SELECT_SESSION = `
  SELECT s.id, s.tenant_id, s.capabilities, s.event_types, s.display_name, s.accent_color, s.logo_url,
         s.spending_cap_micros::text, s.spent_micros::text, s.created_at, s.expires_at, s.opened_at, s.revoked_at,
         s.last_seen_at,
         NOT (t.status = 'active' AND (k.revoked_at IS NULL OR k.revoked_at > $NOW) AND k.kind = 'secret'
              AND k.webhooks_allowed) AS ended
    FROM portal_sessions s
    JOIN tenants t ON t.id = s.tenant_id
    JOIN api_keys k ON k.id = s.key_id`;

const selectSession = (now: string) => SELECT_SESSION.replace('$NOW', now);

/**
 * Receivers' portal sessions (docs/portal.md). An operator's key creates one for a tenant; its one-time link is
 * exchanged for a session token once; the session then acts as that key, scoped to that tenant, until it expires,
 * is revoked, or its key, tenant or team stops (checked on every request, never cached).
 */
export class PortalSessionService {
  constructor(
    private readonly deps: {
      db: DataSource;
      clock: Clock;
      tenants: TenantService;
      eventTypes: EventTypeService;
      events: OperationalEventService;
      /** The console's address (SVC_CONSOLE_URL) for absolute links; null: links are paths on the console. */
      consoleUrl: string | null;
    },
  ) {}

  /** The one-time link of a token: the token is in the query, read once by the console and never logged by it. */
  linkOf(linkToken: string): string {
    const path = `${PORTAL_OPEN_PATH}?token=${linkToken}`;
    return this.deps.consoleUrl === null ? path : `${this.deps.consoleUrl.replace(/\/+$/, '')}${path}`;
  }

  /** Only an active tenant gets a session; event types must be active ones of the team. */
  async createSession(
    ctx: CallContext,
    tenantId: string,
    input: CreatePortalSessionInput,
  ): Promise<IssuedPortalSession> {
    const { clock } = this.deps;
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const inner = { ...ctx, tx };
      const tenant = await this.deps.tenants.getTenant(inner, tenantId);
      if (tenant.status !== 'active')
        throw new ServiceError('invalid_state', 'a deleted tenant cannot get a portal session');
      for (const name of input.event_types ?? [])
        await this.deps.eventTypes.requireActiveEventType(inner, name, 'event_types');
      const linkToken = newToken(PORTAL_LINK_PREFIX);
      const now = clock.now();
      const id = newId('portalSession', clock);
      await tx.query(
        `INSERT INTO portal_sessions (id, team_id, tenant_id, key_id, link_token_sha256, capabilities, event_types,
           display_name, accent_color, logo_url, spending_cap_micros, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [
          id,
          ctx.actor.teamId,
          tenant.id,
          ctx.actor.keyId,
          hashKey(linkToken),
          input.capabilities,
          input.event_types,
          input.branding.display_name,
          input.branding.accent_color,
          input.branding.logo_url,
          parseUsd(input.spending_cap_usd)!.toString(),
          now,
          addMs(now, input.expires_in_seconds * SECOND),
        ],
      );
      return { session: await this.readSession(inner, id), linkToken, url: this.linkOf(linkToken) };
    });
  }

  /** A tenant's portal sessions, oldest first (IDs sort by creation), ended ones included. */
  async listSessions(ctx: CallContext, tenantId: string, query: PageRequest): Promise<Page<PortalSessionView>> {
    // The request's fields before the lookup, as on every list (docs/api-choices.md, the order of the common checks).
    const limit = parseLimit(query.limit);
    await this.deps.tenants.getTenant(ctx, tenantId);
    const scope: ListScope = { teamId: ctx.actor.teamId, list: 'portal_sessions', filters: { tenant_id: tenantId } };
    const after = decodeCursor(scope, query.cursor);
    const rows: PortalSessionRow[] = await reader(this.deps.db, ctx).query(
      `${selectSession('$5')} WHERE s.team_id = $1 AND s.tenant_id = $2 AND ($3::text IS NULL OR s.id > $3)
        ORDER BY s.id LIMIT $4`,
      [ctx.actor.teamId, tenantId, after, limit + 1, this.deps.clock.now()],
    );
    const now = this.deps.clock.now();
    return toPage(scope, rows, limit, (row) => toPortalSessionView(row, now));
  }

  async getSession(ctx: CallContext, tenantId: string, sessionId: string): Promise<PortalSessionView> {
    const session = await this.readSession(ctx, sessionId);
    if (session.tenantId !== tenantId) throw notFound('portal session');
    return session;
  }

  /** Ends a session at once; revoking a revoked session keeps its first revocation time. */
  async revokeSession(ctx: CallContext, tenantId: string, sessionId: string): Promise<PortalSessionView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const inner = { ...ctx, tx };
      await this.getSession(inner, tenantId, sessionId);
      await tx.query(`UPDATE portal_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, [
        sessionId,
        this.deps.clock.now(),
      ]);
      return this.readSession(inner, sessionId);
    });
  }

  /**
   * What the console's page of a one-time link shows before the link is opened (docs/portal.md, "The link opens
   * once, when confirmed"): the operator's display name and the origins that may frame the page. Reading it uses
   * nothing: mail and chat link scanners fetch every link they see, and only openSession, behind the page's button,
   * uses the link. A link that would not open is refused as openSession refuses it.
   */
  async previewLink(linkToken: string): Promise<{ displayName: string | null; frameOrigins: string[] }> {
    if (!isToken(PORTAL_LINK_PREFIX, linkToken)) throw ended();
    const now = this.deps.clock.now();
    const rows: (PortalSessionRow & { team_id: string; suspended: boolean })[] = await this.deps.db.query(
      `${selectSession('$2').replace(
        'FROM portal_sessions s',
        ', s.team_id, tm.suspended OR tm.webhooks_suspended AS suspended FROM portal_sessions s',
      )} JOIN teams tm ON tm.id = s.team_id WHERE s.link_token_sha256 = $1 AND s.opened_at IS NULL`,
      [hashKey(linkToken), now],
    );
    const row = rows[0];
    if (!row || toPortalSessionView(row, now).status !== 'active') throw ended();
    if (row.suspended) throw new ServiceError('account_suspended', 'the account or its webhooks use is suspended');
    return { displayName: row.display_name, frameOrigins: await this.frameOrigins(row.team_id) };
  }

  /**
   * Exchanges a one-time link token for a session token. A link opens once: a second opening (a forwarded or
   * replayed link) is refused, as is a link of a session that has ended. Records webhooks.portal.session.opened.
   */
  async openSession(linkToken: string): Promise<OpenedPortalSession> {
    if (!isPortalLinkToken(linkToken)) throw ended();
    const now = this.deps.clock.now();
    const token = newToken(PORTAL_SESSION_PREFIX);
    return this.deps.db.transaction(async (tx) => {
      // An UPDATE answers [rows, count] through TypeORM.
      const [rows] = (await tx.query(
        `UPDATE portal_sessions SET session_token_sha256 = $2, opened_at = $3, last_seen_at = $3
          WHERE link_token_sha256 = $1 AND opened_at IS NULL AND revoked_at IS NULL AND expires_at > $3
          RETURNING id, team_id, tenant_id, expires_at`,
        [hashKey(linkToken), hashKey(token), now],
      )) as [{ id: string; team_id: string; tenant_id: string; expires_at: Date }[], number];
      const opened = rows[0];
      if (!opened) throw ended();
      // The session must be usable now (tenant, key, team), else the link is refused like an ended one.
      const actor = await this.authenticateIn(tx, token);
      await this.deps.events.emit(tx, [
        {
          type: 'webhooks.portal.session.opened',
          teamId: actor.teamId,
          tenantId: opened.tenant_id,
          resourceId: opened.id,
          data: { session_id: opened.id },
        },
      ]);
      return { token, sessionId: opened.id, expiresAt: opened.expires_at };
    });
  }

  /** Sign-out of the portal: holding the token is the authority to end it; an ended token is fine. */
  async endSession(token: string): Promise<void> {
    if (!isToken(PORTAL_SESSION_PREFIX, token)) return;
    await this.deps.db.query(
      `UPDATE portal_sessions SET revoked_at = $2 WHERE session_token_sha256 = $1 AND revoked_at IS NULL`,
      [hashKey(token), this.deps.clock.now()],
    );
  }

  /** The actor of a live portal session: the creating key, scoped to the session's tenant (Actor.portal). */
  authenticate(token: string): Promise<Actor> {
    return this.authenticateIn(this.deps.db.manager, token);
  }

  private async authenticateIn(db: DataSource['manager'], token: string): Promise<Actor> {
    if (!isToken(PORTAL_SESSION_PREFIX, token)) throw ended();
    const now = this.deps.clock.now();
    const rows: (PortalSessionRow & { team_id: string; key_id: string; suspended: boolean })[] = await db.query(
      `${selectSession('$2').replace(
        'FROM portal_sessions s',
        ', s.team_id, s.key_id, tm.suspended OR tm.webhooks_suspended AS suspended FROM portal_sessions s',
      )} JOIN teams tm ON tm.id = s.team_id WHERE s.session_token_sha256 = $1`,
      [hashKey(token), now],
    );
    const row = rows[0];
    if (!row) throw ended();
    const session = toPortalSessionView(row, now);
    if (session.status !== 'active') throw ended();
    const owner = row;
    if (owner.suspended) throw new ServiceError('account_suspended', 'the account or its webhooks use is suspended');
    if (row.last_seen_at === null || now.getTime() - row.last_seen_at.getTime() >= LAST_SEEN_RESOLUTION_MS)
      await db.query(`UPDATE portal_sessions SET last_seen_at = $2 WHERE id = $1`, [row.id, now]);
    return {
      teamId: owner.team_id,
      keyId: owner.key_id,
      portal: {
        sessionId: session.id,
        tenantId: session.tenantId,
        capabilities: session.capabilities,
        eventTypes: session.eventTypes,
      },
    };
  }

  /** The portal's own view of its session: branding, capabilities, the tenant's name and the frame origins. */
  async describeSession(ctx: CallContext): Promise<PortalSessionInfo> {
    const scope = ctx.actor.portal;
    if (!scope) throw new ServiceError('unauthorized', 'a portal session is required');
    const session = await this.readSession(ctx, scope.sessionId);
    const tenant = await this.deps.tenants.getTenant(ctx, scope.tenantId);
    return { session, tenantName: tenant.name, frameOrigins: await this.frameOrigins(ctx.actor.teamId) };
  }

  /** The origins the team lets frame its portal (team setting portal_frame_origins). */
  async frameOrigins(teamId: string): Promise<string[]> {
    const rows: { origins: string[] }[] = await this.deps.db.query(
      `SELECT portal_frame_origins AS origins FROM team_settings WHERE team_id = $1`,
      [teamId],
    );
    return rows[0]?.origins ?? [];
  }

  private async readSession(ctx: CallContext, sessionId: string): Promise<PortalSessionView> {
    if (!isWellFormedId(sessionId, 'portalSession')) throw notFound('portal session');
    const now = this.deps.clock.now();
    const rows: PortalSessionRow[] = await reader(this.deps.db, ctx).query(
      `${selectSession('$3')} WHERE s.id = $1 AND s.team_id = $2`,
      [sessionId, ctx.actor.teamId, now],
    );
    const row = rows[0];
    if (!row) throw notFound('portal session');
    return toPortalSessionView(row, now);
  }
}
