import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import { ServiceError, notFound } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { ApiKeyEntity, type KeyKind } from './api-key.entity.js';
import { generateKey, hashKey, isValidSecretKey } from './keys.js';
import { TeamEntity } from './team.entity.js';

export interface CreateKeyOptions {
  kind?: KeyKind;
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

/** Teams and keys: administered by the operator of the installation (admin CLI), not by the public API. */
export class TeamService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    /** Called after a key or a team's standing changes, so this process's auth cache forgets at once. */
    private readonly credentialsChanged: () => void = () => undefined,
  ) {}

  async createTeam(name: string): Promise<TeamEntity> {
    if (!name || name.length > 128)
      throw new ServiceError('invalid_field', 'name must be 1 to 128 characters', { field: 'name' });
    const now = this.clock.now();
    const team = this.db.getRepository(TeamEntity).create({
      id: newId('team', this.clock),
      name,
      suspended: false,
      webhooksSuspended: false,
      hasPaymentCard: true,
      createdAt: now,
      updatedAt: now,
    });
    return this.db.getRepository(TeamEntity).save(team);
  }

  listTeams(): Promise<TeamEntity[]> {
    return this.db.getRepository(TeamEntity).find({ order: { id: 'ASC' } });
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
    const key = this.db.getRepository(ApiKeyEntity).create({
      id: newId('key', this.clock),
      teamId,
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

  /** True when a key with exactly this secret exists and is usable (not revoked). */
  async hasActiveKey(teamId: string, secret: string): Promise<boolean> {
    const key = await this.db.getRepository(ApiKeyEntity).findOneBy({ secretSha256: hashKey(secret) });
    return key !== null && key.teamId === teamId && key.revokedAt === null;
  }

  async revokeKey(keyId: string): Promise<void> {
    const result = await this.db.getRepository(ApiKeyEntity).update({ id: keyId }, { revokedAt: this.clock.now() });
    if (!result.affected) throw notFound('key');
    this.credentialsChanged();
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
