import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { canonicalStringify } from '@svc/json';
import { addMs, DAY, type Clock } from '../common/clock.js';
import type { Actor } from '../common/context.js';
import { ServiceError } from '../common/errors.js';
import { comparableValue } from '../common/raw-json.js';
import { bindPackedBytes, retryOnConflict, statementParameters, type Bind } from '../common/transaction.js';

export const IDEMPOTENCY_RETENTION_MS = 35 * DAY;
/** An Idempotency-Key: 1 to 128 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,128}$/;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | null;
  /** The key that made the first request (some responses show secrets only to it). */
  keyId: string;
}

/** What the work hands back: the response to store for replays and whatever the transport needs to send. */
export interface IdempotentResult<T> {
  response: Omit<StoredResponse, 'keyId'>;
  value: T;
}

export type RunOnceOutcome<T> = { outcome: 'executed'; value: T } | { outcome: 'replay'; response: StoredResponse };

export function validateIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined)
    throw new ServiceError('invalid_field', 'Idempotency-Key is required', { field: 'Idempotency-Key' });
  const value = Array.isArray(header) ? (header.length === 1 ? header[0]! : '') : header;
  if (!IDEMPOTENCY_KEY_PATTERN.test(value))
    throw new ServiceError('invalid_field', 'Idempotency-Key must be 1 to 128 printable ASCII characters', {
      field: 'Idempotency-Key',
    });
  return value;
}

/**
 * Who made a record is part of its key (docs/portal.md, "Idempotency keys"): a team's keys share the team's namespace
 * (the spec's rule), and each receivers' portal session has its own, so a tenant cannot take keys the operator's
 * scripts will use later, nor replay (and see) an answer the operator was given. The separator (0x1f) is not printable
 * ASCII, so no Idempotency-Key a client sends can spell a portal session's stored key.
 */
export function storedIdempotencyKey(actor: Actor, key: string): string {
  return actor.portal ? `portal\u001f${actor.portal.sessionId}\u001f${key}` : key;
}

/** The identity of a request after defaults: operation, path parameters and the parsed, defaulted input. */
export function requestFingerprint(operation: string, params: Record<string, string>, input: unknown): string {
  return createHash('sha256')
    .update(canonicalStringify({ operation, params, input: comparableValue(input) }))
    .digest('hex');
}

/** A completed request's record: kept for replays until IDEMPOTENCY_RETENTION_MS after it was made. */
export interface IdempotencyRecord {
  actor: Actor;
  key: string;
  fingerprint: string;
  response: Omit<StoredResponse, 'keyId'>;
}

/**
 * One statement (or CTE of the caller's statement) writing completed records: `bind` binds a value as the next
 * placeholder. An expired record of the same key is replaced; the key's advisory lock, held by the caller's
 * transaction, makes it the only writer.
 */
export function idempotencyRecordsSql(records: readonly IdempotencyRecord[], now: Date, bind: Bind): string {
  const bodies = bindPackedBytes(
    bind,
    records.map((r) => r.response.body),
  );
  return `INSERT INTO idempotency_records
            (team_id, idempotency_key, key_id, fingerprint, response_status, response_headers, response_body,
             created_at, expires_at)
          SELECT x.team_id, x.idempotency_key, x.key_id, x.fingerprint, x.status, x.headers::jsonb,
                 ${bodies.value('x.body_at', 'x.body_length')},
                 ${bind(now)}::timestamptz, ${bind(addMs(now, IDEMPOTENCY_RETENTION_MS))}::timestamptz
            FROM unnest(${bind(records.map((r) => r.actor.teamId))}::text[],
                        ${bind(records.map((r) => r.key))}::text[],
                        ${bind(records.map((r) => r.actor.keyId))}::text[],
                        ${bind(records.map((r) => r.fingerprint))}::text[],
                        ${bind(records.map((r) => r.response.status))}::int[],
                        ${bind(records.map((r) => JSON.stringify(r.response.headers)))}::text[],
                        ${bodies.offsets}, ${bodies.lengths})
                 AS x(team_id, idempotency_key, key_id, fingerprint, status, headers, body_at, body_length)
          ON CONFLICT (team_id, idempotency_key) DO UPDATE
            SET key_id = EXCLUDED.key_id, fingerprint = EXCLUDED.fingerprint,
                response_status = EXCLUDED.response_status, response_headers = EXCLUDED.response_headers,
                response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at,
                expires_at = EXCLUDED.expires_at`;
}

interface BeginRow {
  locked: boolean;
  fingerprint: string | null;
  key_id: string | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: Buffer | null;
  expires_at: Date | null;
}

/**
 * Exactly-once execution under an Idempotency-Key. The work runs in one transaction that first takes a
 * transaction-scoped advisory lock on the key and writes the completed record last. The lock lives exactly as
 * long as the transaction: a twin arriving meanwhile is answered request_in_progress however long the first one
 * takes (there is no lease to outlive), a failed request rolls back and leaves the key unused, and a holder whose
 * connection dies loses the lock together with its uncommitted work. Double execution is impossible.
 */
export class IdempotencyService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  async runOnce<T>(
    actor: Actor,
    key: string,
    fingerprint: string,
    work: (tx: EntityManager) => Promise<IdempotentResult<T>>,
  ): Promise<RunOnceOutcome<T>> {
    const stored = storedIdempotencyKey(actor, key);
    return retryOnConflict(() => this.runOnceInTransaction(actor, stored, fingerprint, work));
  }

  private runOnceInTransaction<T>(
    actor: Actor,
    key: string,
    fingerprint: string,
    work: (tx: EntityManager) => Promise<IdempotentResult<T>>,
  ): Promise<RunOnceOutcome<T>> {
    return this.db.transaction(async (tx) => {
      const [row]: BeginRow[] = await tx.query('SELECT * FROM idempotency_begin($1, $2)', [actor.teamId, key]);
      if (!row?.locked)
        throw new ServiceError('request_in_progress', 'a request with this Idempotency-Key is still running', {
          retryAfter: 1,
        });
      const now = this.clock.now();
      if (row.fingerprint !== null && row.expires_at !== null && row.expires_at > now) {
        if (row.fingerprint !== fingerprint)
          throw new ServiceError('idempotency_conflict', 'this Idempotency-Key was used for a different request');
        return {
          outcome: 'replay',
          response: {
            status: row.response_status ?? 200,
            headers: row.response_headers ?? {},
            body: row.response_body,
            keyId: row.key_id ?? '',
          },
        };
      }
      const { response, value } = await work(tx);
      const { bind, parameters } = statementParameters();
      await tx.query(idempotencyRecordsSql([{ actor, key, fingerprint, response }], now, bind), parameters);
      return { outcome: 'executed', value };
    });
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
