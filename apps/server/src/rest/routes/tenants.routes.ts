import { z } from 'zod';
import { CreateTenantInput, UpdateTenantInput, type Services, type TenantEntity } from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { decimalString, ErrorShape, listOf, pageQuery, timestamp } from '../shapes.js';

export const TenantShape = z.strictObject({
  id: z.string().startsWith('wdt_'),
  external_id: z.string(),
  name: z.string(),
  metadata: z.record(z.string(), z.string()),
  status: z.enum(['active', 'deleted']),
  version: decimalString,
  created_at: timestamp,
  updated_at: timestamp,
});

export function renderTenant(tenant: TenantEntity): z.infer<typeof TenantShape> {
  return {
    id: tenant.id,
    external_id: tenant.externalId,
    name: tenant.name,
    metadata: tenant.metadata,
    status: tenant.status,
    version: tenant.version,
    created_at: tenant.createdAt.toISOString(),
    updated_at: tenant.updatedAt.toISOString(),
  };
}

export function tenantRoutes(services: Services): RouteSpec[] {
  const { tenants } = services;
  const withEtag = (tenant: TenantEntity) => ({ ETag: tenants.etag(tenant) });
  return [
    defineRoute({
      operationId: 'createTenant',
      summary: 'Create a tenant',
      method: 'POST',
      path: '/tenants',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreateTenantInput,
      responses: { 201: TenantShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, input }) {
        const tenant = await tenants.createTenant(ctx, input);
        return { status: 201, body: renderTenant(tenant), headers: withEtag(tenant) };
      },
    }),
    defineRoute({
      operationId: 'listTenants',
      summary: 'List tenants, oldest first, deleted ones included',
      method: 'GET',
      path: '/tenants',
      auth: 'secret_key',
      rateClass: 'read',
      query: z.object({ external_id: z.string().optional(), ...pageQuery }),
      responses: { 200: listOf(TenantShape), 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await tenants.listTenants(ctx, query);
        return { status: 200, body: { data: page.data.map(renderTenant), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getTenant',
      summary: 'Read a tenant (active or deleted)',
      method: 'GET',
      path: '/tenants/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: TenantShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        const tenant = await tenants.getTenant(ctx, params['id']!);
        return { status: 200, body: renderTenant(tenant), headers: withEtag(tenant) };
      },
    }),
    defineRoute({
      operationId: 'updateTenant',
      summary: 'Change a tenant name or replace its metadata',
      method: 'PATCH',
      path: '/tenants/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      input: UpdateTenantInput,
      responses: {
        200: TenantShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, input }) {
        const tenant = await tenants.updateTenant(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: renderTenant(tenant), headers: withEtag(tenant) };
      },
    }),
    defineRoute({
      operationId: 'deleteTenant',
      summary: 'Delete a tenant (its external_id stays reserved for 90 days)',
      method: 'DELETE',
      path: '/tenants/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      responses: { 204: null, 404: ErrorShape, 412: ErrorShape, 422: ErrorShape, 428: ErrorShape },
      async handler({ ctx, params, ifMatch }) {
        await tenants.deleteTenant(ctx, params['id']!, ifMatch);
        return { status: 204 };
      },
    }),
  ];
}
