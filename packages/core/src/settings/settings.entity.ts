import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'team_settings' })
export class TeamSettingsEntity {
  @PrimaryColumn({ type: 'text', name: 'team_id' }) teamId!: string;
  @Column({ type: 'bigint', name: 'configuration_version' }) configurationVersion!: string;
  @Column({ type: 'bigint', name: 'approved_configuration_version' }) approvedConfigurationVersion!: string;
  @Column({ type: 'integer', name: 'payload_retention_days' }) payloadRetentionDays!: number;
  @Column({ type: 'boolean', name: 'response_body_logging' }) responseBodyLogging!: boolean;
  @Column({ type: 'integer', name: 'response_retention_days' }) responseRetentionDays!: number;
  /** The origins allowed to frame the receivers' portal (docs/portal.md); empty: none. */
  @Column({ type: 'text', name: 'portal_frame_origins', array: true }) portalFrameOrigins!: string[];
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt!: Date;
}
