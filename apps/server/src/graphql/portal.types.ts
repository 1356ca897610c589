import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PORTAL_CAPABILITIES } from '@svc/core';
import { Endpoint } from './endpoint.types.js';
import { DeliveryMode, SignatureScheme } from './enums.js';
import { StreamConnection, StreamTokenConnection } from './stream.types.js';

export const PortalCapabilities = Object.fromEntries(PORTAL_CAPABILITIES.map((value) => [value, value])) as {
  [K in (typeof PORTAL_CAPABILITIES)[number]]: K;
};
registerEnumType(PortalCapabilities, {
  name: 'PortalCapabilities',
  description: 'read_only, or manage_endpoints (create and change endpoints, send tests, retry and replay)',
});

export const PortalSessionStatus = {
  active: 'active',
  expired: 'expired',
  revoked: 'revoked',
  ended: 'ended',
} as const;
registerEnumType(PortalSessionStatus, {
  name: 'PortalSessionStatus',
  description: 'ended: its tenant was deleted or the key that created it revoked',
});

@ObjectType({ description: "The operator's branding shown by the portal" })
export class PortalBranding {
  @Field(() => String, { nullable: true }) displayName!: string | null;
  @Field(() => String, { nullable: true, description: '#rrggbb' }) accentColor!: string | null;
  @Field(() => String, { nullable: true, description: 'An https URL' }) logoUrl!: string | null;
}

@ObjectType({ description: "A tenant's session of the receivers' portal (docs/portal.md); never its tokens" })
export class PortalSession {
  @Field(() => ID) id!: string;
  @Field(() => ID) tenantId!: string;
  @Field(() => PortalCapabilities) capabilities!: string;
  @Field(() => [String], { nullable: true, description: 'null: every active event type' }) eventTypes!: string[] | null;
  @Field(() => PortalBranding) branding!: PortalBranding;
  @Field(() => String, { description: 'USD that test events and replays from the session may cost in all' })
  spendingCapUsd!: string;
  @Field(() => String, { description: 'What its test events and replays have cost so far' }) spentUsd!: string;
  @Field(() => PortalSessionStatus) status!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) expiresAt!: Date;
  @Field(() => Date, { nullable: true }) openedAt!: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
  @Field(() => Date, { nullable: true }) lastSeenAt!: Date | null;
}

@ObjectType()
export class PortalSessionConnection {
  @Field(() => [PortalSession]) nodes!: PortalSession[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'A new portal session with its one-time link, shown this once' })
export class IssuedPortalSession {
  @Field(() => PortalSession) session!: PortalSession;
  @Field(() => String, {
    nullable: true,
    description: 'The one-time link to hand to the tenant; null in an idempotent replay',
  })
  url!: string | null;
}

@InputType()
export class PortalBrandingInput {
  @Field(() => String, { nullable: true }) displayName?: string | null;
  @Field(() => String, { nullable: true }) accentColor?: string | null;
  @Field(() => String, { nullable: true }) logoUrl?: string | null;
}

@InputType()
export class CreatePortalSessionInput {
  @Field(() => Int, { nullable: true, description: '60 to 604,800 (7 days); default 3,600' })
  expiresInSeconds?: number;
  @Field(() => PortalCapabilities, { nullable: true, description: 'read_only by default' }) capabilities?: string;
  @Field(() => [String], { nullable: true }) eventTypes?: string[] | null;
  @Field(() => PortalBrandingInput, { nullable: true }) branding?: PortalBrandingInput;
  @Field(() => String, { nullable: true, description: 'Decimal USD; default 0 (no paid test events or replays)' })
  spendingCapUsd?: string;
}

@ObjectType({ description: 'A one-time portal link before it is opened: what its page shows' })
export class PortalLinkPreview {
  @Field(() => String, { nullable: true, description: "The operator's display name (branding)" })
  displayName!: string | null;
  @Field(() => [String], { description: 'The origins that may frame the portal (team setting portal_frame_origins)' })
  frameOrigins!: string[];
}

@ObjectType({ description: 'An opened portal link: the session token the portal keeps in its cookie' })
export class OpenedPortalSession {
  @Field(() => String) token!: string;
  @Field(() => ID) sessionId!: string;
  @Field(() => Date) expiresAt!: Date;
  @Field(() => [String], { description: 'The origins allowed to frame the portal' }) frameOrigins!: string[];
}

@ObjectType({ description: 'The signed-in portal session, as the portal shows it' })
export class PortalContext {
  @Field(() => PortalSession) session!: PortalSession;
  @Field(() => String) tenantName!: string;
  @Field(() => [String]) frameOrigins!: string[];
}

@ObjectType({ description: "An endpoint's signing material, behind the portal's reveal (recorded)" })
export class PortalSigningSecret {
  @Field(() => Endpoint) endpoint!: Endpoint;
  @Field(() => String, { nullable: true, description: 'The current whsec_ secret (HMAC endpoints)' })
  secret!: string | null;
  @Field(() => String, { nullable: true, description: 'The whpk_ public key (ed25519 endpoints)' })
  publicKey!: string | null;
}

@InputType()
export class PortalEndpointInput {
  @Field(() => DeliveryMode, { nullable: true, description: 'push by default; a stream endpoint has no URL' })
  deliveryMode?: keyof typeof DeliveryMode | null;
  @Field(() => String, { nullable: true, description: 'Required for a push endpoint' }) url?: string | null;
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => [String], { nullable: true, description: "Default: the session's event types, or *" }) events?: string[];
  @Field(() => String, { nullable: true, description: 'Filter JSON text' }) filter?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Write-only values' }) headers?: Record<
    string,
    unknown
  >;
  @Field(() => String, { nullable: true, description: 'Write-only Authorization value' }) authorization?: string | null;
  @Field(() => SignatureScheme, { nullable: true }) signatureScheme?: keyof typeof SignatureScheme;
}

@InputType({ description: 'Omitted fields keep their values; null clears filter and authorization' })
export class PortalEndpointUpdateInput {
  @Field(() => String, { nullable: true }) url?: string;
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => [String], { nullable: true }) events?: string[];
  @Field(() => String, { nullable: true }) filter?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) headers?: Record<string, unknown>;
  @Field(() => String, { nullable: true }) authorization?: string | null;
  @Field(() => String, { nullable: true, description: 'enabled or paused' }) status?: string;
}

@ObjectType({
  description: 'A stream endpoint of the tenant as the portal shows it: where to connect, who is connected',
})
export class PortalEndpointStream {
  @Field(() => String, { description: 'GET it with a stream token (docs/streams.md)' }) streamUrl!: string;
  @Field(() => [StreamConnection], { description: 'Open connections, oldest first' }) connections!: StreamConnection[];
  @Field(() => StreamTokenConnection, { description: 'Its tokens (never the tokens themselves)' })
  tokens!: StreamTokenConnection;
}
