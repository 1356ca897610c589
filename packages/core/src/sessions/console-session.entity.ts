import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A signed-in web console: only the SHA-256 of its token is stored; it acts as the key that created it. */
@Entity({ name: 'console_sessions' })
export class ConsoleSessionEntity {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text', name: 'team_id' }) teamId!: string;
  @Column({ type: 'text', name: 'key_id' }) keyId!: string;
  @Column({ type: 'bytea', name: 'token_sha256' }) tokenSha256!: Buffer;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'expires_at' }) expiresAt!: Date;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
  @Column({ type: 'timestamptz', name: 'last_seen_at' }) lastSeenAt!: Date;
}
