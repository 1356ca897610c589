import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  getNamedType,
  isEnumType,
  isObjectType,
  lexicographicSortSchema,
  printSchema,
  type GraphQLNamedType,
} from 'graphql';
import { readFileSync } from 'node:fs';
import {
  ANALYTICS_BUCKETS,
  DELIVERY_STATUSES,
  ListEndpointsQuery,
  ListSubscriptionDeliveriesQuery,
  MESSAGE_STATUSES,
} from '@svc/core';
import { buildGraphqlSchema } from './schema.js';
import { startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function gql(query: string, variables: Record<string, unknown> = {}, key: string | null = h.team.key) {
  const response = await fetch(`${h.rootUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: response.status, body: (await response.json()) as any };
}

describe('GraphQL', () => {
  it('authenticates with the same keys and answers unauthorized in extensions.code', async () => {
    const anonymous = await gql('{ viewer { teamId } }', {}, null);
    expect(anonymous.body.errors[0].extensions.code).toBe('unauthorized');
    const signedIn = await gql('{ viewer { teamId teamName } }');
    expect(signedIn.body.data.viewer).toEqual({ teamId: h.team.teamId, teamName: 'main' });
  });

  it('manages tenants through the same services, with REST error codes', async () => {
    const created = await gql(
      'mutation($input: CreateTenantInput!) { createTenant(input: $input) { id externalId name metadata status version etag } }',
      { input: { externalId: 'gql-1', name: 'GraphQL', metadata: { plan: 'pro' } } },
    );
    const tenant = created.body.data.createTenant;
    expect(tenant).toMatchObject({
      externalId: 'gql-1',
      name: 'GraphQL',
      metadata: { plan: 'pro' },
      status: 'active',
      version: '1',
    });
    const rest = await h.request('GET', `/tenants/${tenant.id}`);
    expect(rest.headers.get('etag')).toBe(tenant.etag);

    const duplicate = await gql('mutation($input: CreateTenantInput!) { createTenant(input: $input) { id } }', {
      input: { externalId: 'gql-1', name: 'Again' },
    });
    expect(duplicate.body.errors[0].extensions).toEqual({
      code: 'resource_in_use',
      field: 'external_id',
      resource_id: tenant.id,
    });

    const invalid = await gql('mutation($input: CreateTenantInput!) { createTenant(input: $input) { id } }', {
      input: { externalId: 'bad id', name: 'x' },
    });
    expect(invalid.body.errors[0].extensions).toMatchObject({ code: 'invalid_field', field: 'external_id' });

    const updated = await gql(
      'mutation($id: ID!, $etag: String!) { updateTenant(id: $id, etag: $etag, input: { name: "Renamed" }) { name version etag } }',
      {
        id: tenant.id,
        etag: tenant.etag,
      },
    );
    expect(updated.body.data.updateTenant).toMatchObject({ name: 'Renamed', version: '2' });
    const stale = await gql('mutation($id: ID!, $etag: String!) { deleteTenant(id: $id, etag: $etag) }', {
      id: tenant.id,
      etag: tenant.etag,
    });
    expect(stale.body.errors[0].extensions.code).toBe('revision_conflict');
    const deleted = await gql('mutation($id: ID!, $etag: String!) { deleteTenant(id: $id, etag: $etag) }', {
      id: tenant.id,
      etag: updated.body.data.updateTenant.etag,
    });
    expect(deleted.body.data.deleteTenant).toBe(true);
    const list = await gql('{ tenants(first: 10) { nodes { id status } nextCursor } }');
    expect(list.body.data.tenants.nodes).toContainEqual({ id: tenant.id, status: 'deleted' });
  });

  it('keeps event type examples exactly as written and archives and unarchives', async () => {
    const example = '{ "amount": 1.50 }';
    const created = await gql(
      'mutation($input: CreateEventTypeInput!) { createEventType(input: $input) { id example etag archived } }',
      {
        input: { name: 'gql.paid', example },
      },
    );
    const eventType = created.body.data.createEventType;
    expect(eventType.example).toBe(example);
    const rest = await h.request('GET', `/event_types/${eventType.id}`);
    expect(rest.text).toContain('"example":{ "amount": 1.50 }');
    const badJson = await gql('mutation($input: CreateEventTypeInput!) { createEventType(input: $input) { id } }', {
      input: { name: 'gql.bad', example: '{"a":' },
    });
    expect(badJson.body.errors[0].extensions).toMatchObject({ code: 'invalid_field', field: 'example' });
    const archived = await gql(
      'mutation($id: ID!, $etag: String!) { archiveEventType(id: $id, etag: $etag) { archived etag } }',
      {
        id: eventType.id,
        etag: eventType.etag,
      },
    );
    expect(archived.body.data.archiveEventType.archived).toBe(true);
    const restored = await gql(
      'mutation($id: ID!, $etag: String!) { unarchiveEventType(id: $id, etag: $etag) { archived } }',
      {
        id: eventType.id,
        etag: archived.body.data.archiveEventType.etag,
      },
    );
    expect(restored.body.data.unarchiveEventType.archived).toBe(false);
  });

  it('reads and updates settings, capabilities and rates', async () => {
    const settings = await gql(
      '{ settings { etag payloadRetentionDays limits { name value unit measured } } capabilities { verificationKinds } rates { meters { id unitPriceUsd } } }',
    );
    expect(settings.body.data.settings.payloadRetentionDays).toBe(30);
    expect(settings.body.data.settings.limits).toContainEqual({
      name: 'dispatch_rate',
      value: 1000,
      unit: 'attempts per second',
      measured: false,
    });
    expect(settings.body.data.capabilities.verificationKinds).toHaveLength(8);
    expect(settings.body.data.rates.meters[1]).toEqual({ id: 'webhooks.delivery_16k', unitPriceUsd: '0.00005' });
    const updated = await gql(
      'mutation($etag: String!) { updateSettings(etag: $etag, input: { responseBodyLogging: true }) { responseBodyLogging configurationVersion } }',
      {
        etag: settings.body.data.settings.etag,
      },
    );
    expect(updated.body.data.updateSettings).toEqual({ responseBodyLogging: true, configurationVersion: '2' });
    const outOfRange = await gql(
      'mutation { updateSettings(etag: "\\"wd:settings:2\\"", input: { responseRetentionDays: 9 }) { configurationVersion } }',
    );
    expect(outOfRange.body.errors[0].extensions).toMatchObject({
      code: 'invalid_field',
      field: 'response_retention_days',
    });
  });

  it('never exposes a secret through a query; only the create and rotate payloads reveal a new signing secret', async () => {
    const schema = await buildGraphqlSchema();
    const reachable = new Set<string>();
    const visit = (type: GraphQLNamedType) => {
      if (reachable.has(type.name) || !isObjectType(type)) return;
      reachable.add(type.name);
      for (const field of Object.values(type.getFields())) {
        const metadataAboutSecrets = [
          'secretVersion',
          'oldSecretExpiresAt',
          'hasAuthorization',
          'secretRotationEndsAt',
          'tokenVersion',
          'tokenRotationEndsAt',
          'generatesSecret',
        ];
        // A feature flag's key is its name, and an ed25519 public key is meant to be read: neither is a credential.
        // A stream endpoint's token records and a connection's token ID name tokens without holding one.
        const notSecrets = [
          'FeatureFlag.key',
          'Endpoint.publicKey',
          'EndpointPublicKey.publicKey',
          'Endpoint.streamTokens',
          'PortalEndpointStream.tokens',
          'StreamConnection.tokenId',
        ];
        if (!metadataAboutSecrets.includes(field.name) && !notSecrets.includes(`${type.name}.${field.name}`))
          expect(field.name, `${type.name}.${field.name}`).not.toMatch(/secret|password|authorization|token|key$/i);
        visit(getNamedType(field.type));
      }
    };
    visit(schema.getQueryType()!);
    expect(reachable).toContain('Endpoint');
    const mutationTypes = Object.values(schema.getMutationType()!.getFields()).map((f) => getNamedType(f.type).name);
    const revealing = Object.values(schema.getMutationType()!.getFields())
      .filter((f) => getNamedType(f.type).name === 'EndpointSecretReveal')
      .map((f) => f.name)
      .sort();
    // The receivers' portal's own create and rotate (docs/portal.md) reveal the new secret the same way.
    expect(revealing).toEqual([
      'createEndpoint',
      'portalCreateEndpoint',
      'portalRotateEndpointSecret',
      'rotateEndpointSecret',
    ]);
    expect(mutationTypes).toContain('EndpointSecretReveal');
    // A stream token (docs/streams.md): only in its create payload.
    expect(
      Object.values(schema.getMutationType()!.getFields())
        .filter((f) => getNamedType(f.type).name === 'StreamTokenReveal')
        .map((f) => f.name),
    ).toEqual(['createStreamToken', 'portalCreateStreamToken']);
    // A source's receive URL and generated secret: only in the create and rotate payloads.
    expect(reachable).toContain('Source');
    expect(reachable).not.toContain('SourceWithSecrets');
    const sourceRevealing = Object.values(schema.getMutationType()!.getFields())
      .filter((f) => getNamedType(f.type).name === 'SourceWithSecrets')
      .map((f) => f.name)
      .sort();
    expect(sourceRevealing).toEqual(['createSource', 'rotateSourceSecret', 'rotateSourceToken']);
    // An event subscription's secret: only in the create and rotate payloads.
    expect(reachable).toContain('EventSubscription');
    expect(reachable).not.toContain('EventSubscriptionWithSecret');
    const subscriptionRevealing = Object.values(schema.getMutationType()!.getFields())
      .filter((f) => getNamedType(f.type).name === 'EventSubscriptionWithSecret')
      .map((f) => f.name)
      .sort();
    expect(subscriptionRevealing).toEqual(['createEventSubscription', 'rotateEventSubscriptionSecret']);
    const committed = readFileSync(new URL('../../../../docs/schema.graphql', import.meta.url), 'utf8');
    // Sorted, as scripts/print-graphql-schema.ts writes it: argument order is not stable across builds in a process.
    expect(committed.trim()).toBe(printSchema(lexicographicSortSchema(schema)).trim());
  });
});

describe('GraphQL filter arguments', () => {
  it('are enums of the values the services accept, so clients learn them and GraphQL refuses others', async () => {
    const schema = await buildGraphqlSchema();
    const argument = (type: string, field: string, name: string) => {
      const parent = schema.getType(type);
      if (!isObjectType(parent)) throw new Error(type);
      const arg = parent.getFields()[field]!.args.find((a) => a.name === name)!;
      const named = getNamedType(arg.type);
      if (!isEnumType(named)) throw new Error(`${type}.${field}(${name}) is ${named.name}, not an enum`);
      return named.getValues().map((value) => value.value as string);
    };
    expect(argument('Query', 'messages', 'status')).toEqual([...MESSAGE_STATUSES]);
    expect(argument('Query', 'deliveries', 'status')).toEqual([...DELIVERY_STATUSES]);
    expect(argument('Query', 'deliveries', 'kind')).toEqual(['original', 'replay']);
    expect(argument('Query', 'endpoints', 'status')).toEqual(ListEndpointsQuery.shape.status.unwrap().options);
    expect(argument('Query', 'analytics', 'bucket')).toEqual([...ANALYTICS_BUCKETS]);
    expect(argument('Query', 'replayQuote', 'configuration')).toEqual(['frozen', 'current']);
    expect(argument('Mutation', 'replayDelivery', 'configuration')).toEqual(['frozen', 'current']);
    for (const list of ['messages', 'deliveries', 'events'])
      expect(argument('Query', list, 'order'), list).toEqual(['oldest', 'newest']);
    expect(argument('Query', 'eventSubscriptionDeliveries', 'status')).toEqual(
      ListSubscriptionDeliveriesQuery.shape.status.unwrap().options,
    );

    // The values are spelt as on REST; another is refused before any resolver runs.
    const listed = await gql('query($s: DeliveryStatus) { deliveries(status: $s) { nextCursor } }', { s: 'failed' });
    expect(listed.body.errors).toBeUndefined();
    const refused = await gql('{ endpoints(status: sleeping) { nextCursor } }');
    expect(refused.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(refused.body.errors[0].message).toContain('EndpointStatus');
  });
});

describe('GraphQL rate limits', () => {
  it('shares the REST buckets: a mutation past the config-write burst gets rate_limited', async () => {
    const team = await h.newTeam('gql-rate');
    const codes: (string | undefined)[] = [];
    for (let i = 0; i < 41; i += 1) {
      const result = await gql(
        'mutation($input: CreateEventTypeInput!) { createEventType(input: $input) { id } }',
        { input: { name: `rate.t${i}` } },
        team.key,
      );
      codes.push(result.body.errors?.[0]?.extensions?.code);
    }
    expect(codes.slice(0, 40).every((code) => code === undefined)).toBe(true);
    expect(codes[40]).toBe('rate_limited');
    const query = await gql('{ viewer { teamId } }', {}, team.key);
    expect(query.body.data.viewer.teamId).toBe(team.teamId);
  });
});
