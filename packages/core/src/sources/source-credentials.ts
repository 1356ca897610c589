import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Actor } from '../common/context.js';
import type { Sealer } from '../common/sealing.js';

/** Where a source's secrets and receive tokens are sealed (each version under its own context). */
export const secretContext = (sourceId: string, version: number) => `source:${sourceId}:secret:${version}`;
export const tokenContext = (sourceId: string, version: number) => `source:${sourceId}:token:${version}`;

/** A receive token: 32 random bytes, base64url, with a prefix that says what it is. */
export function newToken(): string {
  return `rcv_${randomBytes(32).toString('base64url')}`;
}

export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A version a rotation retires: it keeps answering until `until` (now: at once). */
export async function retireCredentials(
  tx: EntityManager,
  table: 'source_secrets' | 'source_tokens',
  sourceId: string,
  until: Date,
): Promise<void> {
  await tx.query(
    `UPDATE ${table} SET expires_at = $2 WHERE source_id = $1 AND (expires_at IS NULL OR expires_at > $2)`,
    [sourceId, until],
  );
}

export async function addSecret(
  tx: EntityManager,
  sealer: Sealer,
  sourceId: string,
  version: number,
  secret: string,
  generated: boolean,
  keyId: string,
  now: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO source_secrets (source_id, version, secret_sealed, generated, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [sourceId, version, sealer.seal(secret, secretContext(sourceId, version)), generated, keyId, now],
  );
}

export async function addToken(
  tx: EntityManager,
  sealer: Sealer,
  sourceId: string,
  version: number,
  token: string,
  keyId: string,
  now: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO source_tokens (token_sha256, source_id, version, token_sealed, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [tokenDigest(token), sourceId, version, sealer.seal(token, tokenContext(sourceId, version)), keyId, now],
  );
}

export async function bumpVersion(tx: EntityManager, id: string, now: Date): Promise<void> {
  await tx.query(`UPDATE sources SET version = version + 1, updated_at = $2 WHERE id = $1`, [id, now]);
}

/**
 * For idempotent replays of create and rotate: the token or generated secret of that version, shown again only
 * to the key that made it and only while it is current.
 */
export async function readSecretsMadeBy(
  db: EntityManager,
  sealer: Sealer,
  actor: Actor,
  id: string,
  versions: { token?: number; secret?: number },
): Promise<{ token: string | null; secret: string | null }> {
  const [tokenRow]: { token_sealed: Buffer }[] =
    versions.token === undefined
      ? []
      : await db.query(
          `SELECT t.token_sealed FROM source_tokens t JOIN sources s ON s.id = t.source_id
            WHERE t.source_id = $1 AND t.version = $2 AND t.created_by = $3 AND t.expires_at IS NULL
              AND s.team_id = $4 AND s.deleted_at IS NULL`,
          [id, versions.token, actor.keyId, actor.teamId],
        );
  const [secretRow]: { secret_sealed: Buffer }[] =
    versions.secret === undefined
      ? []
      : await db.query(
          `SELECT x.secret_sealed FROM source_secrets x JOIN sources s ON s.id = x.source_id
            WHERE x.source_id = $1 AND x.version = $2 AND x.created_by = $3 AND x.expires_at IS NULL
              AND x.generated
              AND s.team_id = $4 AND s.deleted_at IS NULL`,
          [id, versions.secret, actor.keyId, actor.teamId],
        );
  return {
    token: tokenRow ? sealer.open(tokenRow.token_sealed, tokenContext(id, versions.token!)) : null,
    secret: secretRow ? sealer.open(secretRow.secret_sealed, secretContext(id, versions.secret!)) : null,
  };
}
