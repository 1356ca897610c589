import { Column, Entity, PrimaryColumn } from 'typeorm';

export type TenantStatus = 'active' | 'deleted';

@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text', name: 'team_id' }) teamId!: string;
  @Column({ type: 'text', name: 'external_id' }) externalId!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'jsonb' }) metadata!: Record<string, string>;
  @Column({ type: 'text' }) status!: TenantStatus;
  @Column({ type: 'bigint' }) version!: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt!: Date;
  @Column({ type: 'timestamptz', name: 'deleted_at', nullable: true }) deletedAt!: Date | null;
  /** A deleted tenant's content is all erased (set by the retention sweep; later sweeps skip the tenant). */
  @Column({ type: 'timestamptz', name: 'content_erased_at', nullable: true }) contentErasedAt!: Date | null;
}

/** Holds an external_id for its tenant, and for 90 days after the tenant is deleted. */
@Entity({ name: 'tenant_external_id_claims' })
export class TenantExternalIdClaimEntity {
  @PrimaryColumn({ type: 'text', name: 'team_id' }) teamId!: string;
  @PrimaryColumn({ type: 'text', name: 'external_id' }) externalId!: string;
  @Column({ type: 'text', name: 'tenant_id' }) tenantId!: string;
  @Column({ type: 'timestamptz', name: 'reserved_until', nullable: true }) reservedUntil!: Date | null;
}
