import { Column, Entity, PrimaryColumn } from 'typeorm';

export type KeyKind = 'secret' | 'publishable';

@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text', name: 'team_id' }) teamId!: string;
  @Column({ type: 'text' }) kind!: KeyKind;
  /** Only the SHA-256 of the key is stored. */
  @Column({ type: 'bytea', name: 'secret_sha256' }) secretSha256!: Buffer;
  @Column({ type: 'boolean', name: 'webhooks_allowed' }) webhooksAllowed!: boolean;
  @Column({ type: 'bigint', name: 'spending_limit_micros', nullable: true }) spendingLimitMicros!: string | null;
  /** Feature-flag environments the key administers; null: all of its team's. */
  @Column({ type: 'text', array: true, name: 'environment_ids', nullable: true }) environmentIds!: string[] | null;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}
