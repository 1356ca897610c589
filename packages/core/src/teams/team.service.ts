import type { DataSource, EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import { ServiceError, notFound } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { ApiKeyEntity, type KeyKind } from './api-key.entity.js';
import { generateKey, hashKey, isValidSecretKey } from './keys.js';
import { TeamEntity } from './team.entity.js';

export interface CreateKeyOptions {
  kind?: KeyKind;
  /** The operator's name for the key, 1 to 100 characters (shown in key lists and usage reports). */
  label?: string | null;
  webhooksAllowed?: boolean;
  spendingLimitMicros?: bigint | null;
  /** Use this value instead of generating one (the local team's configured key). */
  secret?: string;
  /** Restrict the key's admin access to these feature-flag environments of its team (default: all of them). */
  environmentIds?: readonly string[] | null;
}

export interface IssuedKey {
  keyId: string;
  /** Shown once: only its hash is stored. */
  secret: string;
  /** The environments it administers; null: all of its team's. */
  environmentIds: string[] | null;
}

export interface CreateTeamOptions {
  /** Whether the team starts with a payment card on file (default: yes, so that a new team can send at once). */
  paymentCard?: boolean;
  /** Refuse a name another team already has (the admin CLI asks this unless --allow-duplicate). */
  uniqueName?: boolean;
}

/** A team as the operator lists it. */
export interface TeamSummary {
  id: string;
  name: string;
  suspended: boolean;
  webhooksSuspended: boolean;
  hasPaymentCard: boolean;
  /** Keys not revoked (a key in a rotation's overlap counts until its revocation time). */
  activeKeys: number;
  createdAt: Date;
}

export interface RotatedKey extends IssuedKey {
  replacedKeyId: string;
  /** When the replaced key stops working: now, or after the overlap asked for. */
  replacedKeyRevokedAt: Date;
  /** Sources whose captures the replaced key paid for, now billed to the new key. */
  sourcesMoved: number;
}

/** The longest overlap a rotation allows: both keys work meanwhile. */
export const MAX_ROTATION_OVERLAP_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Rows a team may have and still be deleted: its credentials and bookkeeping that hold nothing of its customers'.
 * Any row of the team in another table (tenants, messages, charges, ...) means the team holds data.
 */
const DELETABLE_WITH_TEAM = ['console_sessions', 'api_keys', 'rate_limit_buckets'] as const;

/** Teams and keys: administered by the operator of the installation (admin CLI), not by the public API. */
export class TeamService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    /** Called after a key or a team's standing changes, so this process's auth cache forgets at once. */
    private readonly credentialsChanged: () => void = () => undefined,
  ) {}

  async createTeam(name: string, options: CreateTeamOptions = {}): Promise<TeamEntity> {
    checkTeamName(name);
    return this.db.transaction(async (tx) => {
      if (options.uniqueName) await this.refuseTakenName(tx, name, null);
      const now = this.clock.now();
      const team = tx.getRepository(TeamEntity).create({
        id: newId('team', this.clock),
        name,
        suspended: false,
        webhooksSuspended: false,
        hasPaymentCard: options.paymentCard ?? true,
        createdAt: now,
        updatedAt: now,
      });
      return tx.getRepository(TeamEntity).save(team);
    });
  }

  /** Renames a team; `uniqueName` refuses a name another team has. */
  async renameTeam(teamId: string, name: string, options: { uniqueName?: boolean } = {}): Promise<TeamEntity> {
    checkTeamName(name);
    return this.db.transaction(async (tx) => {
      const team = await tx
        .getRepository(TeamEntity)
        .findOne({ where: { id: teamId }, lock: { mode: 'pessimistic_write' } });
      if (!team) throw notFound('team');
      if (options.uniqueName) await this.refuseTakenName(tx, name, teamId);
      team.name = name;
      team.updatedAt = this.clock.now();
      return tx.getRepository(TeamEntity).save(team);
    });
  }

  /** Serialises creates and renames to one name (a transaction lock), then refuses it when another team has it. */
  private async refuseTakenName(tx: EntityManager, name: string, exceptTeamId: string | null): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('team name ' || $1))`, [name]);
    const taken = await tx.getRepository(TeamEntity).findOne({ where: { name }, order: { id: 'ASC' } });
    if (taken && taken.id !== exceptTeamId)
      throw new ServiceError('resource_in_use', `a team named "${name}" already exists (${taken.id})`, {
        field: 'name',
      });
  }

  listTeams(): Promise<TeamEntity[]> {
    return this.db.getRepository(TeamEntity).find({ order: { id: 'ASC' } });
  }

  /** Every team with its standing and its number of usable keys, oldest first, in one statement. */
  async listTeamSummaries(): Promise<TeamSummary[]> {
    const rows: {
      id: string;
      name: string;
      suspended: boolean;
      webhooks_suspended: boolean;
      has_payment_card: boolean;
      active_keys: string;
      created_at: Date;
    }[] = await this.db.query(
      `SELECT t.id, t.name, t.suspended, t.webhooks_suspended, t.has_payment_card, t.created_at,
              (SELECT count(*) FROM api_keys k WHERE k.team_id = t.id AND (k.revoked_at IS NULL OR k.revoked_at > $1))
                AS active_keys
         FROM teams t ORDER BY t.id`,
      [this.clock.now()],
    );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      suspended: row.suspended,
      webhooksSuspended: row.webhooks_suspended,
      hasPaymentCard: row.has_payment_card,
      activeKeys: Number(row.active_keys),
      createdAt: row.created_at,
    }));
  }

  /**
   * Deletes a team that holds no data: only its keys, console sessions and rate-limit buckets go with it. A team
   * with anything else (tenants, event types, sources, messages, charges, feature flags, ...) is refused with what
   * it holds: suspend it instead. Every table with a team_id column is checked, so a table added later is covered.
   */
  async deleteTeam(teamId: string): Promise<{ keysDeleted: number }> {
    return this.db.transaction(async (tx) => {
      const team = await tx
        .getRepository(TeamEntity)
        .findOne({ where: { id: teamId }, lock: { mode: 'pessimistic_write' } });
      if (!team) throw notFound('team');
      const tables: { table_name: string }[] = await tx.query(
        `SELECT c.table_name FROM information_schema.columns c
           JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
          WHERE c.table_schema = current_schema() AND c.column_name = 'team_id' AND t.table_type = 'BASE TABLE'
            AND c.table_name <> ALL($1::text[])
          ORDER BY c.table_name`,
        [DELETABLE_WITH_TEAM],
      );
      const holding: string[] = [];
      for (const { table_name: table } of tables) {
        const [row] = (await tx.query(`SELECT EXISTS (SELECT 1 FROM "${table}" WHERE team_id = $1) AS found`, [
          teamId,
        ])) as { found: boolean }[];
        if (row?.found) holding.push(table);
      }
      if (holding.length > 0)
        throw new ServiceError(
          'resource_in_use',
          `team ${teamId} holds data (${holding.join(', ')}): it cannot be deleted; suspend it instead`,
        );
      let keysDeleted = 0;
      try {
        for (const table of DELETABLE_WITH_TEAM) {
          const [, affected] = (await tx.query(`DELETE FROM ${table} WHERE team_id = $1`, [teamId])) as [
            unknown,
            number,
          ];
          if (table === 'api_keys') keysDeleted = affected;
        }
        await tx.getRepository(TeamEntity).delete({ id: teamId });
      } catch (error) {
        // A row elsewhere still names one of its keys (a month's spend row, a charge): that is data too.
        const code = (error as { driverError?: { code?: string } }).driverError?.code;
        if (code !== '23503') throw error;
        throw new ServiceError('resource_in_use', `team ${teamId} holds data that names its keys: suspend it instead`);
      }
      this.credentialsChanged();
      return { keysDeleted };
    });
  }

  async getTeam(teamId: string): Promise<TeamEntity> {
    const team = await this.db.getRepository(TeamEntity).findOneBy({ id: teamId });
    if (!team) throw notFound('team');
    return team;
  }

  findTeamByName(name: string): Promise<TeamEntity | null> {
    return this.db.getRepository(TeamEntity).findOne({ where: { name }, order: { id: 'ASC' } });
  }

  async createKey(teamId: string, options: CreateKeyOptions = {}): Promise<IssuedKey> {
    await this.getTeam(teamId);
    const kind = options.kind ?? 'secret';
    if (options.secret !== undefined && !(kind === 'secret' && isValidSecretKey(options.secret)))
      throw new ServiceError('invalid_field', 'not a valid svc_sk_ key', { field: 'secret' });
    const limit = options.spendingLimitMicros;
    if (limit !== undefined && limit !== null && limit < 0n)
      throw new ServiceError('invalid_field', 'spending limit must not be negative', { field: 'spending_limit_usd' });
    const environmentIds = await this.checkEnvironments(teamId, options.environmentIds ?? null);
    const secret = options.secret ?? generateKey(kind);
    if (
      options.secret !== undefined &&
      (await this.db.getRepository(ApiKeyEntity).existsBy({ secretSha256: hashKey(secret) }))
    )
      throw new ServiceError('resource_in_use', 'this key value is already in use by another team or was revoked', {
        field: 'secret',
      });
    const label = checkLabel(options.label ?? null);
    const key = this.db.getRepository(ApiKeyEntity).create({
      id: newId('key', this.clock),
      teamId,
      label,
      kind,
      secretSha256: hashKey(secret),
      webhooksAllowed: options.webhooksAllowed ?? true,
      spendingLimitMicros: limit === undefined || limit === null ? null : limit.toString(),
      environmentIds,
      revokedAt: null,
      createdAt: this.clock.now(),
    });
    await this.db.getRepository(ApiKeyEntity).save(key);
    return { keyId: key.id, secret, environmentIds };
  }

  /** A restriction names 1 to 50 distinct environments, each of the team. */
  private async checkEnvironments(teamId: string, ids: readonly string[] | null): Promise<string[] | null> {
    if (ids === null) return null;
    const unique = [...new Set(ids)];
    if (unique.length === 0 || unique.length > 50)
      throw new ServiceError('invalid_field', 'environments must name 1 to 50 environments', { field: 'environments' });
    const rows: { id: string }[] = await this.db.query(
      `SELECT id FROM feature_flag_environments WHERE team_id = $1 AND id = ANY($2::text[])`,
      [teamId, unique],
    );
    const missing = unique.filter((id) => !rows.some((row) => row.id === id));
    if (missing.length > 0)
      throw new ServiceError('invalid_field', `no environment ${missing[0]} in team ${teamId}`, {
        field: 'environments',
      });
    return unique;
  }

  /** True when a key with exactly this secret exists and is usable (not revoked, or in a rotation's overlap). */
  async hasActiveKey(teamId: string, secret: string): Promise<boolean> {
    const key = await this.db.getRepository(ApiKeyEntity).findOneBy({ secretSha256: hashKey(secret) });
    return key !== null && key.teamId === teamId && (key.revokedAt === null || key.revokedAt > this.clock.now());
  }

  /**
   * Revokes a key now (also one in a rotation's overlap). A key already revoked is left as it is: the answer says
   * when it was revoked.
   */
  async revokeKey(keyId: string): Promise<{ revokedAt: Date; alreadyRevoked: boolean }> {
    const now = this.clock.now();
    const rows: { revoked_at: Date; already: boolean }[] = await this.db.query(
      `WITH before AS (SELECT id, revoked_at FROM api_keys WHERE id = $1 FOR UPDATE),
            done AS (UPDATE api_keys k SET revoked_at = $2 FROM before b
                      WHERE k.id = b.id AND (b.revoked_at IS NULL OR b.revoked_at > $2) RETURNING k.revoked_at)
       SELECT coalesce((SELECT revoked_at FROM done), b.revoked_at) AS revoked_at,
              NOT EXISTS (SELECT 1 FROM done) AS already
         FROM before b`,
      [keyId, now],
    );
    const row = rows[0];
    if (!row) throw notFound('key');
    this.credentialsChanged();
    return { revokedAt: row.revoked_at, alreadyRevoked: row.already };
  }

  /** Sets or clears a key's label. */
  async setKeyLabel(keyId: string, label: string | null): Promise<void> {
    const result = await this.db.getRepository(ApiKeyEntity).update({ id: keyId }, { label: checkLabel(label) });
    if (!result.affected) throw notFound('key');
  }

  /**
   * Issues a new secret for a key: a new key with the same team, kind, webhook access, spending limit, environments
   * and label, which takes over the sources the old one paid for. The old key is revoked now, or after
   * `overlapMs` (both work meanwhile, so that senders can switch). The new key's month-to-date spend starts at 0.
   */
  async rotateKey(keyId: string, overlapMs = 0): Promise<RotatedKey> {
    if (!Number.isInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_ROTATION_OVERLAP_MS)
      throw new ServiceError('invalid_field', 'the overlap is 0 to 30 days', { field: 'overlap' });
    return this.db.transaction(async (tx) => {
      const old = await tx
        .getRepository(ApiKeyEntity)
        .findOne({ where: { id: keyId }, lock: { mode: 'pessimistic_write' } });
      if (!old) throw notFound('key');
      const now = this.clock.now();
      if (old.revokedAt)
        throw new ServiceError(
          'invalid_state',
          old.revokedAt > now
            ? `key ${keyId} is already being rotated out: it is revoked at ${old.revokedAt.toISOString()}`
            : `key ${keyId} was revoked at ${old.revokedAt.toISOString()}: issue a new key instead`,
        );
      const secret = generateKey(old.kind);
      const replacement = tx.getRepository(ApiKeyEntity).create({
        id: newId('key', this.clock),
        teamId: old.teamId,
        label: old.label,
        kind: old.kind,
        secretSha256: hashKey(secret),
        webhooksAllowed: old.webhooksAllowed,
        spendingLimitMicros: old.spendingLimitMicros,
        environmentIds: old.environmentIds,
        revokedAt: null,
        createdAt: now,
      });
      await tx.getRepository(ApiKeyEntity).insert(replacement);
      const revokedAt = new Date(now.getTime() + overlapMs);
      await tx.getRepository(ApiKeyEntity).update({ id: keyId }, { revokedAt });
      const [, sourcesMoved] = (await tx.query(
        `UPDATE sources SET billing_key_id = $2, version = version + 1, updated_at = $3
          WHERE billing_key_id = $1 AND deleted_at IS NULL`,
        [keyId, replacement.id, now],
      )) as [unknown, number];
      this.credentialsChanged();
      return {
        keyId: replacement.id,
        secret,
        environmentIds: replacement.environmentIds,
        replacedKeyId: keyId,
        replacedKeyRevokedAt: revokedAt,
        sourcesMoved,
      };
    });
  }

  async setSuspension(teamId: string, suspension: { suspended: boolean; webhooksSuspended: boolean }): Promise<void> {
    await this.getTeam(teamId);
    await this.db.getRepository(TeamEntity).update({ id: teamId }, { ...suspension, updatedAt: this.clock.now() });
    this.credentialsChanged();
  }

  async setPaymentCard(teamId: string, hasPaymentCard: boolean): Promise<void> {
    await this.getTeam(teamId);
    await this.db.getRepository(TeamEntity).update({ id: teamId }, { hasPaymentCard, updatedAt: this.clock.now() });
  }
}

function checkTeamName(name: string): void {
  if (!name || name.length > 128)
    throw new ServiceError('invalid_field', 'name must be 1 to 128 characters', { field: 'name' });
}

function checkLabel(label: string | null): string | null {
  if (label !== null && (label.length === 0 || label.length > 100))
    throw new ServiceError('invalid_field', 'a key label is 1 to 100 characters', { field: 'label' });
  return label;
}
