import 'reflect-metadata';
import { buildSchema } from 'type-graphql';
import type { Services } from '@svc/core';
import { authChecker } from './authorization.js';
import { DeliveryResolver } from './delivery.resolver.js';
import { EndpointResolver } from './endpoint.resolver.js';
import { OperationalEventResolver } from './event.resolver.js';
import { MessageResolver } from './message.resolver.js';
import { EventTypeResolver, SettingsResolver, TenantResolver, ViewerResolver } from './resolvers.js';
import { ConsoleSessionResolver } from './session.resolver.js';

/**
 * Every root field declares @Authorized() (a key or console session) or @Authorized(PUBLIC) (the console
 * session mutations, whose credential is their input); authorization.test.ts refuses any other. The operation
 * guard (guard.plugin.ts) authenticates and charges the rate limit once per request, before any resolver.
 */
export function buildGraphqlSchema() {
  return buildSchema({
    resolvers: [
      ViewerResolver,
      TenantResolver,
      EventTypeResolver,
      SettingsResolver,
      EndpointResolver,
      MessageResolver,
      DeliveryResolver,
      OperationalEventResolver,
      ConsoleSessionResolver,
    ],
    authChecker,
    validate: false,
  });
}

export type { Services };
