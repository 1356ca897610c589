import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { ServiceError, notFound } from '../common/errors.js';
import { isWellFormedId } from '../common/ids.js';
import { reader, retryOnConflict } from '../common/transaction.js';

/** An open stream as any server process sees it (the console's list of connections). */
export interface StreamConnectionView {
  id: string;
  tokenId: string;
  openedAt: Date;
  /** The receiver's address as the server saw it (the proxy's client address behind trusted proxies). */
  remoteAddress: string;
  /** Deliveries leased to this connection and not acknowledged yet. */
  unacknowledged: number;
}

export interface StreamConnectionLimits {
  perEndpoint: number;
  perTeam: number;
}

/** A connection that has not beaten for this long is gone (its process died): its row and its leases go. */
export const STREAM_CONNECTION_DEAD_AFTER_SECONDS = 5;

export interface OpenedConnection {
  id: string;
  teamId: string;
  endpointId: string;
  tokenId: string;
  remoteAddress: string;
}

/**
 * The table of open streams (`stream_connections`), beaten once a second by the server process that holds each
 * one, so every process can list them, count them against the limits and tell a lease whose connection died from
 * one in use. Beats use the database's clock (they are about processes), due times the service clock.
 */
export class StreamConnectionService {
  constructor(
    private readonly deps: { db: DataSource; clock: Clock },
    private readonly deadAfterSeconds = STREAM_CONNECTION_DEAD_AFTER_SECONDS,
  ) {}

  /** The endpoint's live connections, oldest first, with what each holds unacknowledged. */
  async list(ctx: CallContext, endpointId: string): Promise<StreamConnectionView[]> {
    if (!isWellFormedId(endpointId, 'endpoint')) throw notFound('endpoint');
    const rows = (await reader(this.deps.db, ctx).query(
      `SELECT e.id AS endpoint_id, c.id, c.token_id, c.opened_at, c.remote_address,
              (SELECT count(*) FROM delivery_queue q WHERE q.endpoint_id = e.id AND q.lease_owner = c.id AND q.due_at > $3)::int
                AS unacknowledged
         FROM endpoints e
         LEFT JOIN stream_connections c
           ON c.endpoint_id = e.id AND c.beat_at > now() - make_interval(secs => $4::float8)
        WHERE e.id = $1 AND e.team_id = $2 AND e.deleted_at IS NULL
        ORDER BY c.opened_at, c.id`,
      [endpointId, ctx.actor.teamId, this.deps.clock.now(), this.deadAfterSeconds],
    )) as {
      id: string | null;
      token_id: string;
      opened_at: Date;
      remote_address: string;
      unacknowledged: number;
    }[];
    if (rows.length === 0) throw notFound('endpoint');
    return rows
      .filter((row) => row.id !== null)
      .map((row) => ({
        id: row.id!,
        tokenId: row.token_id,
        openedAt: row.opened_at,
        remoteAddress: row.remote_address,
        unacknowledged: row.unacknowledged,
      }));
  }

  /**
   * Registers a new stream unless the endpoint or the team already has as many live ones as the limits allow
   * (429 too_many_concurrent_requests naming which). The team's advisory lock makes the count and the insert one
   * step for concurrent opens of the team.
   */
  async open(connection: OpenedConnection, limits: StreamConnectionLimits): Promise<void> {
    await retryOnConflict(() =>
      this.deps.db.transaction(async (tx) => {
        await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('stream-connections:' || $1, 0))`, [
          connection.teamId,
        ]);
        const [counts] = (await tx.query(
          `SELECT count(*) FILTER (WHERE endpoint_id = $2)::int AS endpoint, count(*)::int AS team
             FROM stream_connections WHERE team_id = $1 AND beat_at > now() - make_interval(secs => $3::float8)`,
          [connection.teamId, connection.endpointId, this.deadAfterSeconds],
        )) as [{ endpoint: number; team: number }];
        if (counts.endpoint >= limits.perEndpoint)
          throw new ServiceError(
            'too_many_concurrent_requests',
            `this endpoint has ${limits.perEndpoint} open streams, the most it may have; close one first`,
          );
        if (counts.team >= limits.perTeam)
          throw new ServiceError(
            'too_many_concurrent_requests',
            `this team has ${limits.perTeam} open streams, the most it may have; close one first`,
          );
        await tx.query(
          `INSERT INTO stream_connections (id, team_id, endpoint_id, token_id, remote_address, opened_at, beat_at)
           VALUES ($1, $2, $3, $4, $5, $6, now())`,
          [
            connection.id,
            connection.teamId,
            connection.endpointId,
            connection.tokenId,
            connection.remoteAddress,
            this.deps.clock.now(),
          ],
        );
      }),
    );
  }

  /**
   * Beats the given connections (one statement for all a process holds) and answers those that must end: their
   * row is gone (a sweep took it after a stall), their token was revoked, their endpoint deleted.
   */
  async beat(connectionIds: readonly string[]): Promise<string[]> {
    if (connectionIds.length === 0) return [];
    const rows = (await this.deps.db.query(
      `WITH beat AS (
         UPDATE stream_connections SET beat_at = now() WHERE id = ANY($1::text[]) RETURNING id, token_id, endpoint_id)
       SELECT w.id FROM unnest($1::text[]) AS w(id)
        WHERE NOT EXISTS (
          SELECT 1 FROM beat b JOIN stream_tokens t ON t.id = b.token_id JOIN endpoints e ON e.id = b.endpoint_id
           WHERE b.id = w.id AND t.revoked_at IS NULL AND e.deleted_at IS NULL)`,
      [connectionIds],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /**
   * A stream that ended: its row goes and what it held unacknowledged is due again now (attempt numbers only grow:
   * the next offer is a new attempt with the same webhook-id), so a reconnecting receiver gets it first.
   */
  async close(connectionId: string): Promise<string | null> {
    const rows = (await this.deps.db.query(
      `WITH gone AS (DELETE FROM stream_connections WHERE id = $1 RETURNING endpoint_id),
            freed AS (UPDATE delivery_queue SET lease_owner = NULL, due_at = $2
                       WHERE lease_owner = $1 AND endpoint_id IN (SELECT endpoint_id FROM gone) RETURNING endpoint_id)
       SELECT endpoint_id FROM gone`,
      [connectionId, this.deps.clock.now()],
    )) as { endpoint_id: string }[];
    return rows[0]?.endpoint_id ?? null;
  }

  /**
   * Connections whose process died (no beat for deadAfterSeconds): their rows go, and every stream lease whose
   * connection is not live any more is due now. Returns the endpoints that got deliveries back.
   */
  async releaseDead(): Promise<string[]> {
    const rows = (await this.deps.db.query(
      `WITH dead AS (
         DELETE FROM stream_connections WHERE beat_at < now() - make_interval(secs => $2::float8) RETURNING id),
       freed AS (
         UPDATE delivery_queue q SET lease_owner = NULL, due_at = $1
          WHERE q.lease_owner LIKE 'wdc\\_%' AND q.lease_owner IS NOT NULL
            AND (q.lease_owner IN (SELECT id FROM dead)
                 OR (NOT EXISTS (SELECT 1 FROM stream_connections c WHERE c.id = q.lease_owner)
                     -- A timeout sweep's lease (stream-settle.ts) only once it has lapsed: that sweep died.
                     AND (q.lease_owner NOT LIKE 'wdc\\_sweep\\_%' OR q.due_at <= $1)))
         RETURNING q.endpoint_id)
       SELECT DISTINCT endpoint_id FROM freed`,
      [this.deps.clock.now(), this.deadAfterSeconds],
    )) as { endpoint_id: string }[];
    return rows.map((r) => r.endpoint_id);
  }
}
