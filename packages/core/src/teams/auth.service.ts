import type { DataSource } from 'typeorm';
import { ServiceError } from '../common/errors.js';
import type { Actor } from '../common/context.js';
import { hashKey, isWellFormedKey, SECRET_KEY_PREFIX } from './keys.js';

interface KeyRow {
  key_id: string;
  team_id: string;
  kind: string;
  webhooks_allowed: boolean;
  revoked: boolean;
  suspended: boolean;
  webhooks_suspended: boolean;
}

/** Turns an Authorization header into an Actor, or the documented 401 / 403. */
export class AuthService {
  constructor(private readonly db: DataSource) {}

  async authenticate(authorization: string | undefined): Promise<Actor> {
    const unauthorized = () => new ServiceError('unauthorized', 'a valid secret key is required');
    const match = /^Bearer ([^\s]+)$/.exec(authorization ?? '');
    const secret = match?.[1];
    if (!secret || !secret.startsWith(SECRET_KEY_PREFIX) || !isWellFormedKey(secret)) throw unauthorized();
    const rows: KeyRow[] = await this.db.query(
      `SELECT k.id AS key_id, k.team_id, k.kind, k.webhooks_allowed, k.revoked_at IS NOT NULL AS revoked,
              t.suspended, t.webhooks_suspended
         FROM api_keys k JOIN teams t ON t.id = k.team_id
        WHERE k.secret_sha256 = $1`,
      [hashKey(secret)],
    );
    const row = rows[0];
    // Lookup is by hash through a unique index, so no timing comparison on the secret itself is needed.
    if (!row || row.kind !== 'secret' || row.revoked || !row.webhooks_allowed) throw unauthorized();
    if (row.suspended || row.webhooks_suspended)
      throw new ServiceError('account_suspended', 'the account or its webhooks use is suspended');
    return { teamId: row.team_id, keyId: row.key_id };
  }
}
