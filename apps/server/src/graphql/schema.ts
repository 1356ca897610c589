import 'reflect-metadata';
import { buildSchema, type ContainerType } from 'type-graphql';
import type { Services } from '@svc/core';
import { AnalyticsResolver } from './analytics.resolver.js';
import { checkRootArguments } from './argument-checks.js';
import { authChecker } from './authorization.js';
import { DeliveryResolver } from './delivery.resolver.js';
import { EndpointResolver } from './endpoint.resolver.js';
import { OperationalEventResolver } from './event.resolver.js';
import { MessageResolver } from './message.resolver.js';
import { EventTypeResolver, SettingsResolver, TenantResolver, ViewerResolver } from './resolvers.js';
import { ReplayResolver } from './replay.resolver.js';
import { ConsoleSessionResolver } from './session.resolver.js';
import { SourceResolver } from './source.resolver.js';
import { StreamResolver } from './stream.resolver.js';
import { UsageResolver } from './usage.resolver.js';
import { PlatformResolver } from './platform-api.resolver.js';
import { PortalResolver } from './portal.resolver.js';
import { PortalStreamResolver } from './portal-stream.resolver.js';
import { PortalSessionResolver } from './portal-session.resolver.js';

export interface GraphqlSchemaOptions {
  /**
   * SVC_PUBLIC_BASE_URL, for the receive URLs of sources and the stream URLs of stream endpoints; null builds a schema
   * to print or inspect, not to serve.
   */
  publicBaseUrl: string | null;
}

/** One instance per resolver class, made on first use; those that build URLs with the public base URL. */
function resolverInstances(options: GraphqlSchemaOptions): ContainerType {
  const instances = new Map<unknown, unknown>([
    [SourceResolver, new SourceResolver(options.publicBaseUrl)],
    [StreamResolver, new StreamResolver(options.publicBaseUrl)],
    [PortalStreamResolver, new PortalStreamResolver(options.publicBaseUrl)],
  ]);
  return {
    get(resolverClass: new () => unknown) {
      if (!instances.has(resolverClass)) instances.set(resolverClass, new resolverClass());
      return instances.get(resolverClass);
    },
  };
}

/**
 * Every root field declares @Authorized() (a key or console session) or @Authorized(PUBLIC) (the console
 * session mutations, whose credential is their input); authorization.test.ts refuses any other. The operation
 * guard (guard.plugin.ts) authenticates and charges the rate limit once per request, before any resolver.
 */
export async function buildGraphqlSchema(options: GraphqlSchemaOptions = { publicBaseUrl: null }) {
  const schema = await buildSchema({
    resolvers: [
      ViewerResolver,
      TenantResolver,
      EventTypeResolver,
      SettingsResolver,
      EndpointResolver,
      StreamResolver,
      MessageResolver,
      DeliveryResolver,
      ReplayResolver,
      AnalyticsResolver,
      OperationalEventResolver,
      SourceResolver,
      UsageResolver,
      PlatformResolver,
      ConsoleSessionResolver,
      PortalStreamResolver,
      PortalSessionResolver,
      PortalResolver,
    ],
    container: resolverInstances(options),
    authChecker,
    validate: false,
  });
  return checkRootArguments(schema);
}

export type { Services };
