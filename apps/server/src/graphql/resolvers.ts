import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import {
  CreateEventTypeInput as CreateEventTypeSchema,
  CreateTenantInput as CreateTenantSchema,
  ListEventTypesQuery,
  ListTenantsQuery,
  parseInput,
  UpdateEventTypeInput as UpdateEventTypeSchema,
  UpdateSettingsInput as UpdateSettingsSchema,
  UpdateTenantInput as UpdateTenantSchema,
} from '@svc/core';
import { callContext, type GraphqlContext } from './context.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined, rawJsonArgument, toCapabilities, toEventType, toRates, toSettings, toTenant } from './mappers.js';
import {
  Capabilities,
  CreateEventTypeInput,
  CreateTenantInput,
  EventType,
  EventTypeConnection,
  Rates,
  Settings,
  Tenant,
  TenantConnection,
  UpdateEventTypeInput,
  UpdateSettingsInput,
  UpdateTenantInput,
  Viewer,
} from './types.js';

@Resolver()
export class ViewerResolver {
  @Authorized()
  @Query(() => Viewer)
  async viewer(@Ctx() context: GraphqlContext): Promise<Viewer> {
    const team = await context.services.teams.getTeam(callContext(context).actor.teamId);
    return { teamId: team.id, teamName: team.name };
  }

  @Authorized()
  @Query(() => Capabilities)
  capabilities(@Ctx() context: GraphqlContext): Capabilities {
    return toCapabilities(context.services.capabilities);
  }

  @Authorized()
  @Query(() => Rates)
  rates(): Rates {
    return toRates();
  }
}

@Resolver(() => Tenant)
export class TenantResolver {
  @Authorized()
  @Query(() => TenantConnection)
  async tenants(
    @Ctx() context: GraphqlContext,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
    @Arg('externalId', () => String, { nullable: true }) externalId?: string,
  ): Promise<TenantConnection> {
    const { tenants } = context.services;
    const page = await tenants.listTenants(
      callContext(context),
      parseInput(
        ListTenantsQuery,
        defined({ limit: first ?? undefined, cursor: after ?? undefined, external_id: externalId ?? undefined }),
      ),
    );
    return { nodes: page.data.map(toTenant), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Query(() => Tenant)
  async tenant(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Tenant> {
    return toTenant(await context.services.tenants.getTenant(callContext(context), id));
  }

  @Authorized()
  @Mutation(() => Tenant)
  async createTenant(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => CreateTenantInput) input: CreateTenantInput,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Tenant> {
    const { tenants } = context.services;
    const parsed = parseInput(
      CreateTenantSchema,
      defined({ external_id: input.externalId, name: input.name, metadata: input.metadata ?? undefined }),
    );
    return runIdempotent(context, idempotencyKey, {
      operation: 'createTenant',
      input: parsed,
      async run(ctx) {
        return toTenant(await tenants.createTenant(ctx, parsed));
      },
    });
  }

  @Authorized()
  @Mutation(() => Tenant)
  async updateTenant(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('input', () => UpdateTenantInput) input: UpdateTenantInput,
  ): Promise<Tenant> {
    const { tenants } = context.services;
    const tenant = await tenants.updateTenant(
      callContext(context),
      id,
      etag,
      parseInput(UpdateTenantSchema, defined({ name: input.name ?? undefined, metadata: input.metadata ?? undefined })),
    );
    return toTenant(tenant);
  }

  @Authorized()
  @Mutation(() => Boolean)
  async deleteTenant(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<boolean> {
    await context.services.tenants.deleteTenant(callContext(context), id, etag);
    return true;
  }
}

@Resolver(() => EventType)
export class EventTypeResolver {
  @Authorized()
  @Query(() => EventTypeConnection)
  async eventTypes(
    @Ctx() context: GraphqlContext,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
    @Arg('name', () => String, { nullable: true }) name?: string,
  ): Promise<EventTypeConnection> {
    const { eventTypes } = context.services;
    const page = await eventTypes.listEventTypes(
      callContext(context),
      parseInput(
        ListEventTypesQuery,
        defined({ limit: first ?? undefined, cursor: after ?? undefined, name: name ?? undefined }),
      ),
    );
    return { nodes: page.data.map(toEventType), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Query(() => EventType)
  async eventType(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<EventType> {
    return toEventType(await context.services.eventTypes.getEventType(callContext(context), id));
  }

  @Authorized()
  @Mutation(() => EventType)
  async createEventType(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => CreateEventTypeInput) input: CreateEventTypeInput,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<EventType> {
    const { eventTypes } = context.services;
    const parsed = parseInput(
      CreateEventTypeSchema,
      defined({
        name: input.name,
        description: input.description ?? undefined,
        example: rawJsonArgument(input.example, 'example'),
      }),
    );
    return runIdempotent(context, idempotencyKey, {
      operation: 'createEventType',
      input: parsed,
      async run(ctx) {
        return toEventType(await eventTypes.createEventType(ctx, parsed));
      },
    });
  }

  @Authorized()
  @Mutation(() => EventType)
  async updateEventType(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('input', () => UpdateEventTypeInput) input: UpdateEventTypeInput,
  ): Promise<EventType> {
    const { eventTypes } = context.services;
    const eventType = await eventTypes.updateEventType(
      callContext(context),
      id,
      etag,
      parseInput(
        UpdateEventTypeSchema,
        defined({ description: input.description ?? undefined, example: rawJsonArgument(input.example, 'example') }),
      ),
    );
    return toEventType(eventType);
  }

  @Authorized()
  @Mutation(() => EventType)
  async archiveEventType(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<EventType> {
    const { eventTypes } = context.services;
    const eventType = await eventTypes.archiveEventType(callContext(context), id, etag);
    return toEventType(eventType);
  }

  @Authorized()
  @Mutation(() => EventType)
  async unarchiveEventType(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<EventType> {
    const { eventTypes } = context.services;
    const unarchive = parseInput(UpdateEventTypeSchema, { archived: false });
    const eventType = await eventTypes.updateEventType(callContext(context), id, etag, unarchive);
    return toEventType(eventType);
  }
}

@Resolver(() => Settings)
export class SettingsResolver {
  @Authorized()
  @Query(() => Settings)
  async settings(@Ctx() context: GraphqlContext): Promise<Settings> {
    const { services } = context;
    const settings = await services.settings.getSettings(callContext(context));
    return toSettings(settings, services.limits);
  }

  @Authorized()
  @Mutation(() => Settings)
  async updateSettings(
    @Ctx() context: GraphqlContext,
    @Arg('etag', () => String) etag: string,
    @Arg('input', () => UpdateSettingsInput) input: UpdateSettingsInput,
  ): Promise<Settings> {
    const { services } = context;
    const settings = await services.settings.updateSettings(
      callContext(context),
      etag,
      parseInput(
        UpdateSettingsSchema,
        defined({
          payload_retention_days: input.payloadRetentionDays ?? undefined,
          response_body_logging: input.responseBodyLogging ?? undefined,
          response_retention_days: input.responseRetentionDays ?? undefined,
          portal_frame_origins: input.portalFrameOrigins ?? undefined,
        }),
      ),
    );
    return toSettings(settings, services.limits);
  }
}
