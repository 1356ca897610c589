import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { addMs, HOUR, MINUTE, type Clock } from '../common/clock.js';
import type { Actor } from '../common/context.js';
import { notFound, ServiceError } from '../common/errors.js';
import { AuthService } from '../teams/auth.service.js';
import { hashKey } from '../teams/keys.js';
import { ConsoleSessionEntity } from './console-session.entity.js';

export const CONSOLE_SESSION_PREFIX = 'svc_cs_';
/** Absolute: a session ends this long after sign-in however busy it is, so the cookie's Max-Age is exact. */
export const CONSOLE_SESSION_LIFETIME_MS = 12 * HOUR;
/** last_seen_at is a hint for operators, not a timer: written at most this often per session. */
const LAST_SEEN_RESOLUTION_MS = MINUTE;
const TOKEN_BODY = /^[A-Za-z0-9_-]{43}$/;

export interface IssuedConsoleSession {
  /** Given to the console once; only its hash is stored. */
  token: string;
  expiresAt: Date;
  teamId: string;
  keyId: string;
}

interface SessionRow {
  id: string;
  team_id: string;
  key_id: string;
  expires_at: Date;
  revoked: boolean;
  last_seen_at: Date;
  key_usable: boolean;
  suspended: boolean;
  webhooks_suspended: boolean;
  environment_ids: string[] | null;
}

export function isConsoleSessionToken(value: string): boolean {
  return value.startsWith(CONSOLE_SESSION_PREFIX) && TOKEN_BODY.test(value.slice(CONSOLE_SESSION_PREFIX.length));
}

/** The console session token an Authorization header carries, or null (a secret key, or nothing). */
export function sessionTokenOf(authorization: string | undefined): string | null {
  return /^Bearer (svc_cs_[^\s]+)$/.exec(authorization ?? '')?.[1] ?? null;
}

const unauthorized = () => new ServiceError('unauthorized', 'the console session has ended; sign in again');

/**
 * Web console sessions. The console trades a secret key for a session token once, at sign-in, and keeps only
 * the token: it expires, sign-out revokes it, and it stops working with the key or the team that backs it.
 */
export class ConsoleSessionService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    /** The process's shared AuthService, so a revoke or suspension here is seen at once (its cache is cleared). */
    private readonly auth: AuthService,
  ) {}

  /** Checks the secret key like any API request (401, 403 account_suspended) and opens a session for it. */
  async createSession(secretKey: string): Promise<IssuedConsoleSession> {
    const actor = await this.auth.authenticate(`Bearer ${secretKey}`);
    const token = CONSOLE_SESSION_PREFIX + randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const session = this.db.getRepository(ConsoleSessionEntity).create({
      id: `cs_${randomBytes(16).toString('hex')}`,
      teamId: actor.teamId,
      keyId: actor.keyId,
      tokenSha256: hashKey(token),
      createdAt: now,
      expiresAt: addMs(now, CONSOLE_SESSION_LIFETIME_MS),
      revokedAt: null,
      lastSeenAt: now,
    });
    await this.db.getRepository(ConsoleSessionEntity).insert(session);
    return { token, expiresAt: session.expiresAt, teamId: actor.teamId, keyId: actor.keyId };
  }

  /** Ends the session of this token. Idempotent: an unknown, expired or already revoked token is fine. */
  async revokeSession(token: string): Promise<void> {
    if (!isConsoleSessionToken(token)) return;
    await this.db.query(`UPDATE console_sessions SET revoked_at = $2 WHERE token_sha256 = $1 AND revoked_at IS NULL`, [
      hashKey(token),
      this.clock.now(),
    ]);
  }

  /** A team's console sessions, newest first, as the operator lists them (never a token: only its hash is stored). */
  listTeamSessions(teamId: string): Promise<ConsoleSessionEntity[]> {
    return this.db.getRepository(ConsoleSessionEntity).find({ where: { teamId }, order: { createdAt: 'DESC' } });
  }

  /** Ends one session by its ID; an already revoked one is left as it is and the answer says when it ended. */
  async revokeSessionById(sessionId: string): Promise<{ revokedAt: Date; alreadyRevoked: boolean }> {
    const now = this.clock.now();
    const rows: { revoked_at: Date; already: boolean }[] = await this.db.query(
      `WITH before AS (SELECT id, revoked_at FROM console_sessions WHERE id = $1 FOR UPDATE),
            done AS (UPDATE console_sessions s SET revoked_at = $2 FROM before b
                      WHERE s.id = b.id AND b.revoked_at IS NULL RETURNING s.revoked_at)
       SELECT coalesce((SELECT revoked_at FROM done), b.revoked_at) AS revoked_at,
              NOT EXISTS (SELECT 1 FROM done) AS already
         FROM before b`,
      [sessionId, now],
    );
    const row = rows[0];
    if (!row) throw notFound('console session');
    return { revokedAt: row.revoked_at, alreadyRevoked: row.already };
  }

  /** Ends every live session of a team (signs everyone out of its console); answers how many were ended. */
  async revokeTeamSessions(teamId: string): Promise<number> {
    const [, affected] = (await this.db.query(
      `UPDATE console_sessions SET revoked_at = $2 WHERE team_id = $1 AND revoked_at IS NULL AND expires_at > $2`,
      [teamId, this.clock.now()],
    )) as [unknown, number];
    return affected;
  }

  /** The actor of a live session: the key that opened it, as long as that key and its team may still act. */
  async authenticateSession(token: string): Promise<Actor> {
    if (!isConsoleSessionToken(token)) throw unauthorized();
    const rows: SessionRow[] = await this.db.query(
      `SELECT s.id, s.team_id, s.key_id, s.expires_at, s.revoked_at IS NOT NULL AS revoked, s.last_seen_at,
              ((k.revoked_at IS NULL OR k.revoked_at > $2) AND k.kind = 'secret' AND k.webhooks_allowed) AS key_usable,
              t.suspended, t.webhooks_suspended, k.environment_ids
         FROM console_sessions s
         JOIN api_keys k ON k.id = s.key_id
         JOIN teams t ON t.id = s.team_id
        WHERE s.token_sha256 = $1`,
      [hashKey(token), this.clock.now()],
    );
    const row = rows[0];
    const now = this.clock.now();
    if (!row || row.revoked || !row.key_usable || row.expires_at.getTime() <= now.getTime()) throw unauthorized();
    if (row.suspended || row.webhooks_suspended)
      throw new ServiceError('account_suspended', 'the account or its webhooks use is suspended');
    if (now.getTime() - row.last_seen_at.getTime() >= LAST_SEEN_RESOLUTION_MS)
      await this.db.query(`UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1`, [row.id, now]);
    return { teamId: row.team_id, keyId: row.key_id, environmentIds: row.environment_ids };
  }

  /**
   * GraphQL authentication: `Bearer svc_cs_...` is a console session, anything else goes to the key check.
   * The REST API keeps accepting secret keys only.
   */
  authenticateConsole(authorization: string | undefined): Promise<Actor> {
    const token = sessionTokenOf(authorization);
    return token === null ? this.auth.authenticate(authorization) : this.authenticateSession(token);
  }
}
