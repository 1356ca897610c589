import { EndpointEntity, EndpointSecretEntity } from './endpoints/endpoint.entity.js';
import { EventTypeEntity } from './event-types/event-type.entity.js';
import { ConsoleSessionEntity } from './sessions/console-session.entity.js';
import { TeamSettingsEntity } from './settings/settings.entity.js';
import { ApiKeyEntity } from './teams/api-key.entity.js';
import { TeamEntity } from './teams/team.entity.js';
import { TenantEntity, TenantExternalIdClaimEntity } from './tenants/tenant.entity.js';

/** Every entity TypeORM maps; the drift test compares each with its table. */
export const ENTITIES = [
  TeamEntity,
  ApiKeyEntity,
  TenantEntity,
  TenantExternalIdClaimEntity,
  EventTypeEntity,
  TeamSettingsEntity,
  EndpointEntity,
  EndpointSecretEntity,
  ConsoleSessionEntity,
];
