import { hotStatement, type HotSql } from '@svc/db';
import { createHash, randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { ServiceError, notFound } from '../common/errors.js';
import { isWellFormedId, newId } from '../common/ids.js';
import { decodeCursor, parseLimit, toPage, type Page, type PageRequest } from '../common/paging.js';
import { inTransaction, reader } from '../common/transaction.js';
import type { EndpointEntity } from '../endpoints/endpoint.entity.js';
import type { EndpointService } from '../endpoints/endpoint.service.js';
import type { CreateStreamTokenInput } from './stream.inputs.js';
import { notifyStreamsEnded } from './stream-signals.js';
import { streamTokenLookup, streamTokenTouch } from './stream-token-sql.js';

/** A stream token as reads show it: never the token itself, which only create shows, once. */
export interface StreamTokenView {
  id: string;
  endpointId: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** The endpoint and team a stream token opens (GET /endpoints/{id}/stream and its acks). */
export interface StreamCaller {
  tokenId: string;
  teamId: string;
  endpointId: string;
}

/** Tokens an endpoint may hold at once (revoked ones do not count). */
export const MAX_STREAM_TOKENS_PER_ENDPOINT = 50;
/** last_used_at is written at most this often per token, so a busy receiver's acks do not rewrite the row each time. */
export const LAST_USED_RESOLUTION_MS = 60_000;
const TOKEN_PREFIX = 'whst_';
/** whst_ and 43 base64url characters: 32 random bytes. */
const TOKEN_SHAPE = /^whst_[A-Za-z0-9_-]{43}$/;

/** Whether `token` has a stream token's shape (anything else is refused without a lookup). */
export const isStreamTokenShaped = (token: string): boolean => TOKEN_SHAPE.test(token);

/** The token's caller, for its own endpoint only (plan-cached: every stream's opening runs it). */
const AUTHENTICATE_SQL = hotStatement(
  'stream_authenticate_v2',
  `WITH caller AS (${streamTokenLookup({ tokenSha256: '$1', endpointId: '$2' })}),
   used AS (${streamTokenTouch({ now: '$3', resolutionSeconds: '$4' })})
   SELECT id, team_id, endpoint_id FROM caller`,
);

/** What a stream token is stored as (its SHA-256), and what a process keys its per-token state by. */
export const streamTokenDigest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

interface TokenRow {
  id: string;
  endpoint_id: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

const toView = (row: TokenRow): StreamTokenView => ({
  id: row.id,
  endpointId: row.endpoint_id,
  name: row.name,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

/**
 * Endpoint-scoped bearer tokens of stream endpoints (docs/streams.md): created with a team key, shown once and
 * kept as SHA-256; they open the endpoint's stream and acknowledge its deliveries, nothing else. Revoking one ends
 * every stream opened with it, in every server process, at once (stream-signals.ts).
 */
export class StreamTokenService {
  constructor(private readonly deps: { db: DataSource; hot: HotSql; clock: Clock; endpoints: EndpointService }) {}

  async create(
    ctx: CallContext,
    endpointId: string,
    input: CreateStreamTokenInput,
  ): Promise<{ token: StreamTokenView; secret: string }> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const endpoint = await this.streamEndpoint({ ...ctx, tx }, endpointId);
      // The endpoint row's lock serialises creates, so the count below holds when the insert commits.
      await tx.query(`SELECT 1 FROM endpoints WHERE id = $1 FOR NO KEY UPDATE`, [endpoint.id]);
      const [{ n }] = (await tx.query(
        `SELECT count(*)::int AS n FROM stream_tokens WHERE endpoint_id = $1 AND revoked_at IS NULL`,
        [endpoint.id],
      )) as [{ n: number }];
      if (n >= MAX_STREAM_TOKENS_PER_ENDPOINT)
        throw new ServiceError(
          'quota_exceeded',
          `an endpoint holds at most ${MAX_STREAM_TOKENS_PER_ENDPOINT} stream tokens; revoke one first`,
        );
      const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
      const now = this.deps.clock.now();
      const [row] = (await tx.query(
        `INSERT INTO stream_tokens (id, team_id, endpoint_id, name, token_sha256, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, endpoint_id, name, created_at, last_used_at`,
        [
          newId('streamToken', this.deps.clock),
          ctx.actor.teamId,
          endpoint.id,
          input.name,
          streamTokenDigest(secret),
          now,
        ],
      )) as [TokenRow];
      return { token: toView(row), secret };
    });
  }

  /** The endpoint's tokens that are not revoked, oldest first, paged like every list (none for a push endpoint). */
  async list(ctx: CallContext, endpointId: string, page: PageRequest): Promise<Page<StreamTokenView>> {
    const limit = parseLimit(page.limit);
    if (!isWellFormedId(endpointId, 'endpoint')) throw notFound('endpoint');
    const endpoint = await this.deps.endpoints.getEndpointEntity(ctx, endpointId);
    const scope = { teamId: ctx.actor.teamId, list: 'stream_tokens', filters: { endpoint_id: endpoint.id } };
    const after = decodeCursor(scope, page.cursor);
    const rows = (await reader(this.deps.db, ctx).query(
      `SELECT id, endpoint_id, name, created_at, last_used_at FROM stream_tokens
        WHERE endpoint_id = $1 AND team_id = $2 AND revoked_at IS NULL AND ($3::text IS NULL OR id > $3)
        ORDER BY id LIMIT $4`,
      [endpoint.id, ctx.actor.teamId, after, limit + 1],
    )) as TokenRow[];
    return toPage(scope, rows, limit, toView);
  }

  /** Revokes the token; every stream open with it ends at once (its acks are refused from now on). */
  async revoke(ctx: CallContext, endpointId: string, tokenId: string): Promise<void> {
    await inTransaction(this.deps.db, ctx, async (tx) => {
      if (!isWellFormedId(endpointId, 'endpoint')) throw notFound('endpoint');
      const endpoint = await this.deps.endpoints.getEndpointEntity({ ...ctx, tx }, endpointId);
      if (!isWellFormedId(tokenId, 'streamToken')) throw notFound('stream token');
      const revoked = (await tx.query(
        `UPDATE stream_tokens SET revoked_at = $4
          WHERE id = $1 AND endpoint_id = $2 AND team_id = $3 AND revoked_at IS NULL RETURNING id`,
        [tokenId, endpoint.id, ctx.actor.teamId, this.deps.clock.now()],
      )) as [{ id: string }[], number];
      if (revoked[0].length === 0) throw notFound('stream token');
      await notifyStreamsEnded(tx, { tokenIds: [tokenId] });
    });
  }

  /**
   * The caller a stream token names, for this endpoint only; null for anything else (unknown, revoked, another
   * endpoint's token, an endpoint deleted or no longer streaming): the transport answers 401 without saying which.
   */
  async authenticate(endpointId: string, token: string): Promise<StreamCaller | null> {
    if (!TOKEN_SHAPE.test(token) || !isWellFormedId(endpointId, 'endpoint')) return null;
    const now = this.deps.clock.now();
    const rows = await this.deps.hot.query<{ id: string; team_id: string; endpoint_id: string }>(AUTHENTICATE_SQL, [
      streamTokenDigest(token),
      endpointId,
      now,
      LAST_USED_RESOLUTION_MS / 1000,
    ]);
    const row = rows[0];
    return row ? { tokenId: row.id, teamId: row.team_id, endpointId: row.endpoint_id } : null;
  }

  /** The team's endpoint, which must stream: a push endpoint has no stream tokens (409 invalid_state). */
  private async streamEndpoint(ctx: CallContext, endpointId: string): Promise<EndpointEntity> {
    if (!isWellFormedId(endpointId, 'endpoint')) throw notFound('endpoint');
    const endpoint = await this.deps.endpoints.getEndpointEntity(ctx, endpointId);
    if (endpoint.deliveryMode !== 'stream')
      throw new ServiceError('invalid_state', 'only a stream endpoint (delivery_mode stream) has stream tokens');
    return endpoint;
  }
}
