import type { DataSource, EntityManager } from 'typeorm';
import { addMs, DAY, type Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { assertCurrent, etagFor } from '../common/etag.js';
import { ServiceError, notFound } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, parseLimit, toPage, type ListScope, type Page } from '../common/paging.js';
import { inTransaction, lockOwned, lockTeam, reader } from '../common/transaction.js';
import type { Limits } from '../catalog/limits.js';
import { deleteSources } from '../sources/source-writes.js';
import { deleteTenantEndpoints } from '../endpoints/endpoint-writes.js';
import { cancelWaitingDeliveries } from '../deliveries/delivery-records.js';
import { TenantEntity, TenantExternalIdClaimEntity } from './tenant.entity.js';
import type { CreateTenantInput, ListTenantsQuery, UpdateTenantInput } from './tenant.inputs.js';
import { toTenantView, type TenantView } from './tenant.view.js';

export const EXTERNAL_ID_RESERVATION_MS = 90 * DAY;

export class TenantService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    private readonly limits: Limits,
  ) {}

  etag(tenant: { id: string; version: string }): string {
    return etagFor(tenant.id, tenant.version);
  }

  /** Inputs arrive parsed by the transport with the shared schemas (tenant.inputs.ts). */
  async createTenant(ctx: CallContext, input: CreateTenantInput): Promise<TenantView> {
    return inTransaction(this.db, ctx, async (tx) => {
      await lockTeam(tx, ctx.actor.teamId);
      const active = await tx.getRepository(TenantEntity).countBy({ teamId: ctx.actor.teamId, status: 'active' });
      if (active >= this.limits.max_tenants.value)
        throw new ServiceError(
          'quota_exceeded',
          `the team has reached its limit of ${this.limits.max_tenants.value} tenants`,
        );
      const now = this.clock.now();
      await this.releaseOrRefuseExternalId(tx, ctx.actor.teamId, input.external_id, now);
      const tenant = tx.getRepository(TenantEntity).create({
        id: newId('tenant', this.clock),
        teamId: ctx.actor.teamId,
        externalId: input.external_id,
        name: input.name,
        metadata: input.metadata,
        status: 'active',
        version: '1',
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
        contentErasedAt: null,
      });
      await tx.getRepository(TenantEntity).insert(tenant);
      await tx.getRepository(TenantExternalIdClaimEntity).insert({
        teamId: ctx.actor.teamId,
        externalId: input.external_id,
        tenantId: tenant.id,
        reservedUntil: null,
      });
      return toTenantView(tenant);
    });
  }

  /** Answers 409 resource_in_use naming the tenant that holds or reserves the external_id; drops an expired claim. */
  private async releaseOrRefuseExternalId(
    tx: EntityManager,
    teamId: string,
    externalId: string,
    now: Date,
  ): Promise<void> {
    const claims = tx.getRepository(TenantExternalIdClaimEntity);
    const existing = await claims.findOneBy({ teamId, externalId });
    if (!existing) return;
    if (existing.reservedUntil === null || existing.reservedUntil > now)
      throw new ServiceError(
        'resource_in_use',
        'a tenant with this external_id exists or was deleted less than 90 days ago',
        {
          field: 'external_id',
          resourceId: existing.tenantId,
        },
      );
    await claims.delete({ teamId, externalId });
  }

  async getTenant(ctx: CallContext, id: string): Promise<TenantView> {
    const tenant = await reader(this.db, ctx).getRepository(TenantEntity).findOneBy({ id, teamId: ctx.actor.teamId });
    if (!tenant) throw notFound('tenant');
    return toTenantView(tenant);
  }

  async listTenants(ctx: CallContext, query: ListTenantsQuery): Promise<Page<TenantView>> {
    const limit = parseLimit(query.limit);
    const scope: ListScope = {
      teamId: ctx.actor.teamId,
      list: 'tenants',
      filters: { external_id: query.external_id ?? null },
    };
    const after = decodeCursor(scope, query.cursor);
    const qb = reader(this.db, ctx)
      .getRepository(TenantEntity)
      .createQueryBuilder('t')
      .where('t.team_id = :teamId', { teamId: ctx.actor.teamId })
      .orderBy('t.id', 'ASC')
      .limit(limit + 1);
    if (query.external_id !== undefined) qb.andWhere('t.external_id = :externalId', { externalId: query.external_id });
    if (after) qb.andWhere('t.id > :after', { after });
    return toPage(scope, await qb.getMany(), limit, toTenantView);
  }

  async updateTenant(ctx: CallContext, id: string, ifMatch: string, input: UpdateTenantInput): Promise<TenantView> {
    return inTransaction(this.db, ctx, async (tx) => {
      const tenant = await lockOwned(tx, TenantEntity, ctx.actor.teamId, id, 'tenant');
      assertCurrent(ifMatch, this.etag(tenant));
      if (tenant.status !== 'active') throw new ServiceError('invalid_state', 'a deleted tenant cannot be changed');
      const name = input.name ?? tenant.name;
      const metadata = input.metadata ?? tenant.metadata;
      if (name === tenant.name && sameMetadata(metadata, tenant.metadata)) return toTenantView(tenant);
      // An explicit UPDATE of the locked row: save() would read it again first.
      const change = { name, metadata, version: nextVersion(tenant.version), updatedAt: this.clock.now() };
      await tx.getRepository(TenantEntity).update({ id: tenant.id }, change);
      return toTenantView(Object.assign(tenant, change));
    });
  }

  /**
   * Marks the tenant deleted, deletes its endpoints and sources, cancels their waiting deliveries and reserves its external_id
   * for 90 days. Its messages' content stops being readable at once (retained_until is cut at deleted_at) and the
   * retention sweep erases the bytes in small batches once no delivery holds them.
   */
  async deleteTenant(ctx: CallContext, id: string, ifMatch: string): Promise<void> {
    await inTransaction(this.db, ctx, async (tx) => {
      const tenant = await lockOwned(tx, TenantEntity, ctx.actor.teamId, id, 'tenant');
      assertCurrent(ifMatch, this.etag(tenant));
      if (tenant.status === 'deleted') return;
      const now = this.clock.now();
      await tx
        .getRepository(TenantEntity)
        .update(
          { id: tenant.id },
          { status: 'deleted', deletedAt: now, updatedAt: now, version: nextVersion(tenant.version) },
        );
      // Endpoints and sources go with their tenant at once (a source's receive URL stops answering).
      await deleteTenantEndpoints(tx, tenant.id, now);
      await deleteSources(tx, { tenantId: tenant.id }, now);
      await cancelWaitingDeliveries(tx, { tenantId: tenant.id }, 'tenant_deleted', now);
      await tx
        .getRepository(TenantExternalIdClaimEntity)
        .update(
          { teamId: ctx.actor.teamId, externalId: tenant.externalId, tenantId: tenant.id },
          { reservedUntil: addMs(now, EXTERNAL_ID_RESERVATION_MS) },
        );
    });
  }

  /** For other services: the tenant, which must exist in the team and be active. */
  async requireActiveTenant(ctx: CallContext, id: string, field = 'tenant_id'): Promise<TenantEntity> {
    const tenant = await reader(this.db, ctx).getRepository(TenantEntity).findOneBy({ id, teamId: ctx.actor.teamId });
    if (!tenant || tenant.status !== 'active')
      throw new ServiceError('invalid_field', 'tenant must be an active tenant', { field });
    return tenant;
  }
}

function nextVersion(version: string): string {
  return (BigInt(version) + 1n).toString();
}

function sameMetadata(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}
