import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
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
  environment_ids: string[] | null;
}

/** How long a process trusts a key lookup: a revoked key or suspended team is refused within this in every process. */
export const AUTH_CACHE_MS = 1000;
/**
 * A request that finds a lookup this old (and still trusted) is answered from it and starts the next lookup beside
 * it: a key in steady use never waits for one (it cost one request a second per key and process a round trip).
 */
const AUTH_REFRESH_AFTER_MS = 700;
const AUTH_CACHE_ENTRIES = 10_000;

type CachedOutcome = { actor: Actor } | { error: ServiceError };

/**
 * Turns an Authorization header into an Actor, or the documented 401 / 403. Lookups are cached for at most one
 * second per process from the moment they were made (a GET then costs no round trip for its key), and refreshed
 * ahead of that while the key is in use; changes made through this process's TeamService clear the cache at once.
 */
export class AuthService {
  private readonly cache = new Map<string, { outcome: CachedOutcome; until: number }>();
  /** Lookups under way: concurrent requests with one key share one round trip. */
  private readonly lookups = new Map<string, Promise<CachedOutcome | null>>();

  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  /** Drops every cached lookup (a key was revoked or a team suspended in this process). */
  forget(): void {
    this.cache.clear();
    this.lookups.clear();
  }

  async authenticate(authorization: string | undefined): Promise<Actor> {
    const unauthorized = () => new ServiceError('unauthorized', 'a valid secret key is required');
    const match = /^Bearer ([^\s]+)$/.exec(authorization ?? '');
    const secret = match?.[1];
    if (!secret || !secret.startsWith(SECRET_KEY_PREFIX) || !isWellFormedKey(secret)) throw unauthorized();
    const hash = hashKey(secret);
    const now = performance.now();
    const cacheKey = hash.toString('hex');
    const cached = this.cache.get(cacheKey);
    if (cached && cached.until > now) {
      if (cached.until - now < AUTH_CACHE_MS - AUTH_REFRESH_AFTER_MS && !this.lookups.has(cacheKey))
        // Ahead of time: a failed refresh leaves the entry to expire, and the request after that looks up itself.
        this.lookUpAndCache(cacheKey, hash).catch(() => undefined);
      if ('error' in cached.outcome) throw cached.outcome.error;
      return cached.outcome.actor;
    }
    const outcome = await (this.lookups.get(cacheKey) ?? this.lookUpAndCache(cacheKey, hash));
    // Unknown secrets are not cached: a flood of random keys must not evict the real ones.
    if (!outcome) throw unauthorized();
    if ('error' in outcome) throw outcome.error;
    return outcome.actor;
  }

  /**
   * One lookup of a key at a time (concurrent requests with one key share its round trip); its outcome is trusted
   * for AUTH_CACHE_MS from the moment it started, so a change committed after it is seen within that in any case.
   */
  private lookUpAndCache(cacheKey: string, hash: Buffer): Promise<CachedOutcome | null> {
    const startedAt = performance.now();
    const lookup = this.lookUp(hash)
      .then((outcome) => {
        // Not after forget(): a lookup that started before a change this process made must not bring it back.
        if (this.lookups.get(cacheKey) !== lookup) return outcome;
        if (!outcome) this.cache.delete(cacheKey);
        else {
          if (this.cache.size >= AUTH_CACHE_ENTRIES && !this.cache.has(cacheKey)) this.cache.clear();
          this.cache.set(cacheKey, { outcome, until: startedAt + AUTH_CACHE_MS });
        }
        return outcome;
      })
      .finally(() => {
        if (this.lookups.get(cacheKey) === lookup) this.lookups.delete(cacheKey);
      });
    this.lookups.set(cacheKey, lookup);
    return lookup;
  }

  /** The key's outcome, or null for an unknown secret. */
  private async lookUp(hash: Buffer): Promise<CachedOutcome | null> {
    const rows: KeyRow[] = await this.db.query(
      // A revoked_at still to come is a rotation's overlap: the key works until then.
      `SELECT k.id AS key_id, k.team_id, k.kind, k.webhooks_allowed, (k.revoked_at IS NOT NULL AND k.revoked_at <= $2) AS revoked,
              k.environment_ids, t.suspended, t.webhooks_suspended
         FROM api_keys k JOIN teams t ON t.id = k.team_id
        WHERE k.secret_sha256 = $1`,
      [hash, this.clock.now()],
    );
    const row = rows[0];
    // Lookup is by hash through a unique index, so no timing comparison on the secret itself is needed.
    if (!row) return null;
    return row.kind !== 'secret' || row.revoked || !row.webhooks_allowed
      ? { error: new ServiceError('unauthorized', 'a valid secret key is required') }
      : row.suspended || row.webhooks_suspended
        ? { error: new ServiceError('account_suspended', 'the account or its webhooks use is suspended') }
        : { actor: { teamId: row.team_id, keyId: row.key_id, environmentIds: row.environment_ids } };
  }
}
