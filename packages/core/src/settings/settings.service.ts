import { z } from 'zod';
import type { DataSource, EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { assertCurrent } from '../common/etag.js';
import { inTransaction, reader } from '../common/transaction.js';
import { parseInput } from '../common/validation.js';
import { TeamSettingsEntity } from './settings.entity.js';

export const UpdateSettingsInput = z.strictObject({
  payload_retention_days: z.number().int().min(1).max(30).optional(),
  response_body_logging: z.boolean().optional(),
  response_retention_days: z.number().int().min(1).max(7).optional(),
});

export class SettingsService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  etag(settings: TeamSettingsEntity): string {
    return `"wd:settings:${settings.configurationVersion}"`;
  }

  async getSettings(ctx: CallContext): Promise<TeamSettingsEntity> {
    const manager = reader(this.db, ctx);
    return (
      (await manager.getRepository(TeamSettingsEntity).findOneBy({ teamId: ctx.actor.teamId })) ??
      this.createDefaults(manager, ctx.actor.teamId)
    );
  }

  /**
   * Omitted fields keep their values and an unchanged request keeps the version. Configuration changes apply
   * at once, so the approved version follows the configuration version (docs/api-choices.md).
   */
  async updateSettings(ctx: CallContext, ifMatch: string, raw: unknown): Promise<TeamSettingsEntity> {
    const input = parseInput(UpdateSettingsInput, raw);
    return inTransaction(this.db, ctx, async (tx) => {
      await this.getSettings({ ...ctx, tx });
      const settings = await tx
        .getRepository(TeamSettingsEntity)
        .createQueryBuilder('s')
        .setLock('pessimistic_write')
        .where('s.team_id = :teamId', { teamId: ctx.actor.teamId })
        .getOneOrFail();
      assertCurrent(ifMatch, this.etag(settings));
      const next = {
        payloadRetentionDays: input.payload_retention_days ?? settings.payloadRetentionDays,
        responseBodyLogging: input.response_body_logging ?? settings.responseBodyLogging,
        responseRetentionDays: input.response_retention_days ?? settings.responseRetentionDays,
      };
      if (
        next.payloadRetentionDays === settings.payloadRetentionDays &&
        next.responseBodyLogging === settings.responseBodyLogging &&
        next.responseRetentionDays === settings.responseRetentionDays
      )
        return settings;
      const version = (BigInt(settings.configurationVersion) + 1n).toString();
      Object.assign(settings, next, {
        configurationVersion: version,
        approvedConfigurationVersion: version,
        updatedAt: this.clock.now(),
      });
      await tx.getRepository(TeamSettingsEntity).save(settings);
      return settings;
    });
  }

  private async createDefaults(manager: EntityManager, teamId: string): Promise<TeamSettingsEntity> {
    await manager.query(
      `INSERT INTO team_settings (team_id, updated_at) VALUES ($1, $2) ON CONFLICT (team_id) DO NOTHING`,
      [teamId, this.clock.now()],
    );
    return manager.getRepository(TeamSettingsEntity).findOneByOrFail({ teamId });
  }
}
