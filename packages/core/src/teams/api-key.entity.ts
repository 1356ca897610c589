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
  /** The operator's name for the key (admin CLI), shown in key lists and usage reports; never a secret. */
  @Column({ type: 'text', nullable: true }) label!: string | null;
  /** When the key stops working: past (revoked) or, during a rotation's overlap, a time still to come. */
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}
