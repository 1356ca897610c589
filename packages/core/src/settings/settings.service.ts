import type { DataSource, EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { assertCurrent } from '../common/etag.js';
import { inTransaction, reader } from '../common/transaction.js';
import { TeamSettingsEntity } from './settings.entity.js';
import type { UpdateSettingsInput } from './settings.inputs.js';
import { settingsEtag, toSettingsView, type SettingsView } from './settings.view.js';

export class SettingsService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  etag(settings: { configurationVersion: string }): string {
    return settingsEtag(settings.configurationVersion);
  }

  async getSettings(ctx: CallContext): Promise<SettingsView> {
    return toSettingsView(await this.findOrCreate(reader(this.db, ctx), ctx.actor.teamId));
  }

  /**
   * Omitted fields keep their values and an unchanged request keeps the version. Configuration changes apply
   * at once, so the approved version follows the configuration version (docs/api-choices.md). The input arrives
   * parsed by the transport (settings.inputs.ts).
   */
  async updateSettings(ctx: CallContext, ifMatch: string, input: UpdateSettingsInput): Promise<SettingsView> {
    return inTransaction(this.db, ctx, async (tx) => {
      const lock = () =>
        tx
          .getRepository(TeamSettingsEntity)
          .createQueryBuilder('s')
          .setLock('pessimistic_write')
          .where('s.team_id = :teamId', { teamId: ctx.actor.teamId })
          .getOne();
      let settings = await lock();
      if (!settings) {
        await this.insertDefaults(tx, ctx.actor.teamId);
        settings = await lock();
        if (!settings) throw new Error('team settings vanished after their insert');
      }
      assertCurrent(ifMatch, this.etag(settings));
      const next = {
        payloadRetentionDays: input.payload_retention_days ?? settings.payloadRetentionDays,
        responseBodyLogging: input.response_body_logging ?? settings.responseBodyLogging,
        responseRetentionDays: input.response_retention_days ?? settings.responseRetentionDays,
        portalFrameOrigins: input.portal_frame_origins ?? settings.portalFrameOrigins,
      };
      if (
        next.payloadRetentionDays === settings.payloadRetentionDays &&
        next.responseBodyLogging === settings.responseBodyLogging &&
        next.responseRetentionDays === settings.responseRetentionDays &&
        next.portalFrameOrigins.join(' ') === settings.portalFrameOrigins.join(' ')
      )
        return toSettingsView(settings);
      const version = (BigInt(settings.configurationVersion) + 1n).toString();
      const change = {
        ...next,
        configurationVersion: version,
        approvedConfigurationVersion: version,
        updatedAt: this.clock.now(),
      };
      // An explicit UPDATE of the locked row: save() would read it again first.
      await tx.getRepository(TeamSettingsEntity).update({ teamId: ctx.actor.teamId }, change);
      return toSettingsView(Object.assign(settings, change));
    });
  }

  /** A team's settings row is made with the defaults on first use. */
  private async findOrCreate(manager: EntityManager, teamId: string): Promise<TeamSettingsEntity> {
    const repo = manager.getRepository(TeamSettingsEntity);
    const found = await repo.findOneBy({ teamId });
    if (found) return found;
    await this.insertDefaults(manager, teamId);
    return repo.findOneByOrFail({ teamId });
  }

  private async insertDefaults(manager: EntityManager, teamId: string): Promise<void> {
    await manager.query(
      `INSERT INTO team_settings (team_id, updated_at) VALUES ($1, $2) ON CONFLICT (team_id) DO NOTHING`,
      [teamId, this.clock.now()],
    );
  }
}
