import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { canonicalStringify } from '@svc/json';
import { addMs, DAY, SECOND, type Clock } from '../common/clock.js';
import type { Actor } from '../common/context.js';
import { ServiceError } from '../common/errors.js';
import { comparableValue } from '../common/raw-json.js';

export const IDEMPOTENCY_RETENTION_MS = 35 * DAY;
/** A claim whose holder died is taken over after this long. */
export const CLAIM_LEASE_MS = 60 * SECOND;
const KEY_PATTERN = /^[\x20-\x7e]{1,128}$/;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | null;
  /** The key that made the first request (some responses show secrets only to it). */
  keyId: string;
}

export type ClaimResult = { outcome: 'claimed' } | { outcome: 'replay'; response: StoredResponse };

export function validateIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined)
    throw new ServiceError('invalid_field', 'Idempotency-Key is required', { field: 'Idempotency-Key' });
  const value = Array.isArray(header) ? (header.length === 1 ? header[0]! : '') : header;
  if (!KEY_PATTERN.test(value))
    throw new ServiceError('invalid_field', 'Idempotency-Key must be 1 to 128 printable ASCII characters', {
      field: 'Idempotency-Key',
    });
  return value;
}

/** The identity of a request after defaults: operation, path parameters and the parsed, defaulted input. */
export function requestFingerprint(operation: string, params: Record<string, string>, input: unknown): string {
  return createHash('sha256')
    .update(canonicalStringify({ operation, params, input: comparableValue(input) }))
    .digest('hex');
}

interface RecordRow {
  fingerprint: string;
  state: 'running' | 'completed';
  key_id: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: Buffer | null;
}

/**
 * Idempotency keys: a request claims its key before running (so a concurrent twin sees request_in_progress),
 * completes it in the same transaction as its work, and releases it when it fails.
 */
export class IdempotencyService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  async claim(actor: Actor, key: string, fingerprint: string): Promise<ClaimResult> {
    const now = this.clock.now();
    const taken: unknown[] = await this.db.query(
      `INSERT INTO idempotency_records
         (team_id, idempotency_key, key_id, fingerprint, state, locked_until, created_at, expires_at)
       VALUES ($1, $2, $3, $4, 'running', $5, $6, $7)
       ON CONFLICT (team_id, idempotency_key) DO UPDATE
         SET key_id = EXCLUDED.key_id, fingerprint = EXCLUDED.fingerprint, state = 'running',
             locked_until = EXCLUDED.locked_until, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
             response_status = NULL, response_headers = NULL, response_body = NULL
         WHERE idempotency_records.expires_at <= $6
            OR (idempotency_records.state = 'running' AND idempotency_records.locked_until <= $6)
       RETURNING 1`,
      [
        actor.teamId,
        key,
        actor.keyId,
        fingerprint,
        addMs(now, CLAIM_LEASE_MS),
        now,
        addMs(now, IDEMPOTENCY_RETENTION_MS),
      ],
    );
    if (taken.length > 0) return { outcome: 'claimed' };
    const rows: RecordRow[] = await this.db.query(
      `SELECT fingerprint, state, key_id, response_status, response_headers, response_body
         FROM idempotency_records WHERE team_id = $1 AND idempotency_key = $2`,
      [actor.teamId, key],
    );
    const row = rows[0];
    // The holder finished and released between our two statements: try once more.
    if (!row) return this.claim(actor, key, fingerprint);
    if (row.fingerprint !== fingerprint)
      throw new ServiceError('idempotency_conflict', 'this Idempotency-Key was used for a different request');
    if (row.state === 'running')
      throw new ServiceError('request_in_progress', 'a request with this Idempotency-Key is still running', {
        retryAfter: 1,
      });
    return {
      outcome: 'replay',
      response: {
        status: row.response_status ?? 200,
        headers: row.response_headers ?? {},
        body: row.response_body,
        keyId: row.key_id,
      },
    };
  }

  /** Stores the response inside the work's transaction, so work and record commit together. */
  async complete(tx: EntityManager, actor: Actor, key: string, response: Omit<StoredResponse, 'keyId'>): Promise<void> {
    await tx.query(
      `UPDATE idempotency_records
          SET state = 'completed', response_status = $3, response_headers = $4, response_body = $5
        WHERE team_id = $1 AND idempotency_key = $2`,
      [actor.teamId, key, response.status, JSON.stringify(response.headers), response.body],
    );
  }

  /** A request that failed does not consume its key. */
  async release(actor: Actor, key: string): Promise<void> {
    await this.db.query(
      `DELETE FROM idempotency_records WHERE team_id = $1 AND idempotency_key = $2 AND state = 'running'`,
      [actor.teamId, key],
    );
  }

  /** Retention: deletes expired records in small batches so no long transaction is needed. */
  async purgeExpired(batchSize = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const result: [unknown[], number] = await this.db.query(
        `DELETE FROM idempotency_records WHERE ctid IN (
           SELECT ctid FROM idempotency_records WHERE expires_at <= $1 LIMIT $2)`,
        [this.clock.now(), batchSize],
      );
      const deleted = result[1];
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}
