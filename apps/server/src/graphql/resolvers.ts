import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { callContext, type GraphqlContext } from './context.js';
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
      defined({ limit: first ?? undefined, cursor: after ?? undefined, external_id: externalId ?? undefined }),
    );
    return { nodes: page.data.map((t) => toTenant(t, tenants.etag(t))), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Query(() => Tenant)
  async tenant(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Tenant> {
    const tenant = await context.services.tenants.getTenant(callContext(context), id);
    return toTenant(tenant, context.services.tenants.etag(tenant));
  }

  @Authorized()
  @Mutation(() => Tenant)
  async createTenant(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => CreateTenantInput) input: CreateTenantInput,
  ): Promise<Tenant> {
    const { tenants } = context.services;
    const tenant = await tenants.createTenant(
      callContext(context),
      defined({ external_id: input.externalId, name: input.name, metadata: input.metadata ?? undefined }),
    );
    return toTenant(tenant, tenants.etag(tenant));
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
      defined({ name: input.name ?? undefined, metadata: input.metadata ?? undefined }),
    );
    return toTenant(tenant, tenants.etag(tenant));
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
      defined({ limit: first ?? undefined, cursor: after ?? undefined, name: name ?? undefined }),
    );
    return { nodes: page.data.map((e) => toEventType(e, eventTypes.etag(e))), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Query(() => EventType)
  async eventType(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<EventType> {
    const eventType = await context.services.eventTypes.getEventType(callContext(context), id);
    return toEventType(eventType, context.services.eventTypes.etag(eventType));
  }

  @Authorized()
  @Mutation(() => EventType)
  async createEventType(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => CreateEventTypeInput) input: CreateEventTypeInput,
  ): Promise<EventType> {
    const { eventTypes } = context.services;
    const eventType = await eventTypes.createEventType(
      callContext(context),
      defined({
        name: input.name,
        description: input.description ?? undefined,
        example: rawJsonArgument(input.example, 'example'),
      }),
    );
    return toEventType(eventType, eventTypes.etag(eventType));
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
      defined({ description: input.description ?? undefined, example: rawJsonArgument(input.example, 'example') }),
    );
    return toEventType(eventType, eventTypes.etag(eventType));
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
    return toEventType(eventType, eventTypes.etag(eventType));
  }

  @Authorized()
  @Mutation(() => EventType)
  async unarchiveEventType(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<EventType> {
    const { eventTypes } = context.services;
    const eventType = await eventTypes.updateEventType(callContext(context), id, etag, { archived: false });
    return toEventType(eventType, eventTypes.etag(eventType));
  }
}

@Resolver(() => Settings)
export class SettingsResolver {
  @Authorized()
  @Query(() => Settings)
  async settings(@Ctx() context: GraphqlContext): Promise<Settings> {
    const { services } = context;
    const settings = await services.settings.getSettings(callContext(context));
    return toSettings(settings, services.settings.etag(settings), services.limits);
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
      defined({
        payload_retention_days: input.payloadRetentionDays ?? undefined,
        response_body_logging: input.responseBodyLogging ?? undefined,
        response_retention_days: input.responseRetentionDays ?? undefined,
      }),
    );
    return toSettings(settings, services.settings.etag(settings), services.limits);
  }
}
