import { z } from 'zod';
import {
  CreateTenantInput,
  ListTenantsQuery,
  parseInput,
  UpdateTenantInput,
  type Services,
  type TenantView,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { createdAt, ErrorShape, listOf, metadataField, queryOf, updatedAt, versionField } from '../shapes.js';

export const TenantShape = z
  .strictObject({
    id: z.string().startsWith('wdt_').describe('Tenant ID (wdt_...)'),
    external_id: z.string().describe('Your ID for the tenant; unique in the team, reserved 90 days after deletion'),
    name: z.string(),
    metadata: metadataField,
    status: z.enum(['active', 'deleted']),
    version: versionField,
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .meta({ id: 'Tenant', description: 'One of your customers; endpoints and messages belong to a tenant' });

const TenantListShape = listOf(TenantShape, 'TenantList');

export function renderTenant(tenant: TenantView): z.infer<typeof TenantShape> {
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
  const withEtag = (tenant: TenantView) => ({ ETag: tenant.etag });
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
      query: queryOf(ListTenantsQuery, { external_id: 'Only the tenant with this external_id' }),
      responses: { 200: TenantListShape, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await tenants.listTenants(ctx, parseInput(ListTenantsQuery, query));
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
