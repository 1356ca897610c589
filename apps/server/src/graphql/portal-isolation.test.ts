import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { post, startHarness, type Harness } from '../testing/harness.js';
import { rootFieldAccess } from './authorization.js';
import { buildGraphqlSchema } from './schema.js';
import { graphqlClient, type GraphqlResponse } from './test-client.js';

/**
 * The receivers' portal's isolation (docs/portal.md): a portal session reaches only the portal's own fields, and
 * through them only its tenant. Every root field of the schema is called with a portal session; every field of
 * every type the portal fields can return is checked against the types the portal may show.
 */
let h: Harness;
let schema: GraphQLSchema;
let gql: ReturnType<typeof graphqlClient>;
/** The portal session's tenant (mine) and another tenant of the same team (theirs), with one of everything. */
const mine: Record<string, string> = {};
const theirs: Record<string, string> = {};
let portalToken: string;

async function seedTenant(externalId: string, into: Record<string, string>): Promise<void> {
  const tenant = await post(h, '/tenants', { external_id: externalId, name: externalId });
  into['tenant'] = tenant.json.id;
  const endpoint = await post(h, '/endpoints', {
    tenant_id: tenant.json.id,
    url: `https://${externalId}.example.com/`,
  });
  into['endpoint'] = endpoint.json.id;
  into['endpointEtag'] = endpoint.headers.get('etag')!;
  const message = await post(h, '/messages', {
    tenant_id: tenant.json.id,
    event_type: 'invoice.paid',
    payload: { tenant: externalId },
  });
  into['message'] = message.json.id;
  const [delivery] = await h.services.db.query('SELECT id FROM deliveries WHERE message_id = $1', [message.json.id]);
  into['delivery'] = delivery.id;
}

beforeAll(async () => {
  h = await startHarness();
  schema = await buildGraphqlSchema();
  gql = graphqlClient(h);
  await post(h, '/event_types', { name: 'invoice.paid', description: 'An invoice was paid', example: { id: 'in_1' } });
  await post(h, '/event_types', { name: 'user.created' });
  await seedTenant('mine', mine);
  await seedTenant('theirs', theirs);
  const created = await gql(
    `mutation($tenantId: ID!) { createPortalSession(tenantId: $tenantId, input: { capabilities: manage_endpoints,
       eventTypes: ["invoice.paid"], spendingCapUsd: "1" }) { url session { id } } }`,
    { tenantId: mine['tenant'] },
  );
  const linkToken = new URL(created.body.data.createPortalSession.url, 'http://console').searchParams.get('token')!;
  const opened = await gql(
    `mutation($t: String!) { openPortalSession(linkToken: $t) { token } }`,
    { t: linkToken },
    {
      key: null,
    },
  );
  portalToken = opened.body.data.openPortalSession.token;
});
afterAll(async () => {
  await h.close();
});

/** A value for an argument: the other tenant's IDs where an ID is asked, else the simplest valid-looking value. */
function valueFor(type: GraphQLInputType, name: string, ids: Record<string, string>): unknown {
  if (isNonNullType(type)) return valueFor(type.ofType, name, ids);
  if (isListType(type)) return [valueFor(type.ofType, name, ids)];
  if (isEnumType(type)) return type.getValues()[0]!.value;
  if (isInputObjectType(type))
    return Object.fromEntries(
      Object.values(type.getFields())
        // A new push endpoint needs its url, optional in the schema because a stream endpoint has none.
        .filter((field) => isNonNullType(field.type) || (type.name === 'PortalEndpointInput' && field.name === 'url'))
        .map((field) => [field.name, valueFor(field.type, field.name, ids)]),
    );
  switch (type.name) {
    case 'ID':
      return idFor(name, ids);
    case 'Int':
      return 1;
    case 'Float':
      return 1;
    case 'Boolean':
      return true;
    case 'DateTimeISO':
    case 'Date':
      return '2026-11-01T00:00:00.000Z';
    case 'JSONObject':
      return {};
    default:
      return name === 'etag' ? ids['endpointEtag'] : name === 'url' ? 'https://x.example.com/' : 'x';
  }
}

function idFor(name: string, ids: Record<string, string>): string {
  if (/tenant/i.test(name)) return ids['tenant']!;
  if (/endpoint/i.test(name)) return ids['endpoint']!;
  if (/message/i.test(name)) return ids['message']!;
  if (/deliver/i.test(name)) return ids['delivery']!;
  return ids['endpoint']!;
}

/** The ID argument of a portal field names its resource by the field's name (portalMessage(id) is a message). */
function idsForField(field: string, ids: Record<string, string>): Record<string, string> {
  const kind = /Message/.test(field) ? 'message' : /Deliver/.test(field) ? 'delivery' : 'endpoint';
  return { ...ids, endpoint: ids[kind]! };
}

function selectionOf(field: GraphQLField<unknown, unknown>): string {
  return isLeafType(getNamedType(field.type)) ? '' : '{ __typename }';
}

function operationOf(
  root: 'query' | 'mutation',
  field: GraphQLField<unknown, unknown>,
  ids: Record<string, string>,
): { query: string; variables: Record<string, unknown> } {
  const args = field.args as readonly GraphQLArgument[];
  const required = args.filter((arg) => isNonNullType(arg.type));
  const declared = required.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const passed = required.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const variables = Object.fromEntries(
    required.map((arg) => [arg.name, valueFor(arg.type, arg.name, idsForField(field.name, ids))]),
  );
  return {
    query: `${root}${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''} ${selectionOf(field)} }`,
    variables,
  };
}

function rootFields(): { root: 'query' | 'mutation'; field: GraphQLField<unknown, unknown>; access: string }[] {
  const access = rootFieldAccess(schema);
  return [
    ...Object.values(schema.getQueryType()!.getFields()).map((field) => ({ root: 'query' as const, field })),
    ...Object.values(schema.getMutationType()!.getFields()).map((field) => ({ root: 'mutation' as const, field })),
  ].map((entry) => ({
    ...entry,
    access: access.get(`${entry.root === 'query' ? 'Query' : 'Mutation'}.${entry.field.name}`)!,
  }));
}

const codeOf = (response: GraphqlResponse): string | undefined => response.body.errors?.[0]?.extensions?.code;

describe("the receivers' portal's isolation", () => {
  it('refuses a portal session every operator field, and an operator every portal field', async () => {
    const fields = rootFields();
    expect(fields.filter((entry) => entry.access === 'portal').length).toBeGreaterThanOrEqual(15);
    for (const { root, field, access } of fields) {
      if (access === 'public') continue;
      const { query, variables } = operationOf(root, field, mine);
      const name = `${root} ${field.name}`;
      if (access === 'key') {
        const asPortal = await gql(query, variables, { key: portalToken });
        expect(codeOf(asPortal), name).toBe('portal_access_denied');
        expect(asPortal.body.data ?? null, name).toBeNull();
      } else {
        expect(access, name).toBe('portal');
        const asOperator = await gql(query, variables);
        expect(codeOf(asOperator), name).toBe('portal_access_denied');
      }
    }
  });

  it("answers not_found for another tenant's endpoint, message and delivery on every portal field with an ID", async () => {
    for (const { root, field, access } of rootFields()) {
      if (access !== 'portal' || !field.args.some((arg) => arg.name === 'id' || arg.name === 'endpointId')) continue;
      const { query, variables } = operationOf(root, field, theirs);
      const name = `${root} ${field.name}`;
      if (variables['id'] === undefined && variables['endpointId'] === undefined) {
        // An optional filter by another tenant's endpoint lists nothing.
        const filtered = await gql(
          `{ ${field.name}(endpointId: "${theirs['endpoint']}") { nodes { id } } }`,
          {},
          {
            key: portalToken,
          },
        );
        expect(filtered.body.data?.[field.name], name).toEqual({ nodes: [] });
        continue;
      }
      const response = await gql(query, variables, { key: portalToken });
      expect(codeOf(response), name).toBe('not_found');
    }
  });

  it('allows every portal field for its own tenant (or refuses it for the state of the resource only)', async () => {
    const allowedRefusals = new Set(['invalid_state', 'revision_conflict', 'invalid_field']);
    for (const { root, field, access } of rootFields()) {
      if (access !== 'portal' || field.name === 'portalDeleteEndpoint') continue;
      const { query, variables } = operationOf(root, field, mine);
      const response = await gql(query, variables, { key: portalToken });
      const code = codeOf(response);
      const name = `${root} ${field.name}`;
      // The seed has no stream token to revoke: the token is not found, not the endpoint (streams.test.ts revokes).
      if (field.name === 'portalRevokeStreamToken') {
        expect(response.body.errors?.[0]?.message, name).toBe('stream token not found');
        continue;
      }
      if (code !== undefined) expect(allowedRefusals, `${name}: ${response.body.errors[0].message}`).toContain(code);
      else expect(response.body.data[field.name], name).not.toBeNull();
    }
  });

  it('shows only its tenant in lists and only the event types it was given', async () => {
    const lists = await gql(
      `{ portalEndpoints { nodes { id tenantId } } portalMessages { nodes { id tenantId } }
         portalDeliveries { nodes { id tenantId } } portalEventTypes { nodes { name description example } }
         portalEventTypeNames
         portalContext { tenantName session { capabilities eventTypes } } }`,
      {},
      { key: portalToken },
    );
    const data = lists.body.data;
    for (const list of [data.portalEndpoints, data.portalMessages, data.portalDeliveries]) {
      expect(list.nodes.length).toBeGreaterThan(0);
      for (const node of list.nodes) expect(node.tenantId).toBe(mine['tenant']);
    }
    expect(data.portalEventTypes.nodes).toEqual([
      { name: 'invoice.paid', description: 'An invoice was paid', example: '{"id":"in_1"}' },
    ]);
    expect(data.portalEventTypeNames).toEqual(['invoice.paid']);
    expect(data.portalContext).toEqual({
      tenantName: 'mine',
      session: { capabilities: 'manage_endpoints', eventTypes: ['invoice.paid'] },
    });
  });

  it('reaches only the types the portal may show, and refuses the nested operator field it could reach', async () => {
    const portalRoots = rootFields().filter((entry) => entry.access === 'portal');
    const reached = new Set<string>();
    const visit = (typeName: string) => {
      if (reached.has(typeName)) return;
      reached.add(typeName);
      const type = schema.getType(typeName);
      if (!isObjectType(type)) return;
      for (const field of Object.values(type.getFields())) visit(getNamedType(field.type).name);
    };
    for (const { field } of portalRoots) visit(getNamedType(field.type).name);
    const objectTypes = [...reached].filter((name) => isObjectType(schema.getType(name))).sort();
    // Endpoint.replays reaches Replay (the operator's bulk replays) and Message.price and Delivery.price what the
    // operator pays: each refused at run time, below.
    expect(objectTypes).toEqual(
      [
        'DeliveryPrice',
        'MessagePrice',
        'ReplayCostEstimate',
        'ReplayCounts',
        'Attempt',
        'AttemptConnection',
        // Why an attempt to the receiver's own endpoint failed: its address, phase and timings (docs/portal.md).
        'AttemptErrorDetail',
        'AttemptPhaseTimings',
        'Delivery',
        'DeliveryConnection',
        'DeliveryCounts',
        'DeliveryTarget',
        'EarlierGeneration',
        'Endpoint',
        'EndpointConnection',
        'EndpointHealth',
        'EndpointPublicKey',
        'EndpointSecretReveal',
        'EventType',
        'EventTypeConnection',
        'Message',
        'MessageConnection',
        'MessageContent',
        'PortalBranding',
        'PortalContext',
        'PortalSession',
        'PortalSigningSecret',
        'Replay',
        'ReplayConnection',
        // A stream endpoint's stream, connections and tokens (portalEndpointStream, portalCreateStreamToken); the
        // operator's Endpoint.streamTokens, streamConnections and streamUrl are refused below.
        'PortalEndpointStream',
        'StreamConnection',
        'StreamToken',
        'StreamTokenConnection',
        'StreamTokenReveal',
      ].sort(),
    );
    for (const document of [
      `{ portalEndpoints { nodes { id replays { nodes { id } } } } }`,
      `{ portalMessages { nodes { id price { totalUsd } } } }`,
      `{ portalDeliveries { nodes { id price { totalUsd } } } }`,
      `{ portalEndpoints { nodes { id streamTokens { nodes { id } } } } }`,
      `{ portalEndpoints { nodes { id streamConnections { id } } } }`,
      `{ portalEndpoints { nodes { id streamUrl } } }`,
    ]) {
      const refused = await gql(document, {}, { key: portalToken });
      expect(codeOf(refused), document).toBe('portal_access_denied');
    }
  });

  it('refuses a document that mixes portal and operator fields, whole', async () => {
    const mixed = await gql(`{ portalEndpoints { nodes { id } } tenants { nodes { id } } }`, {}, { key: portalToken });
    expect(codeOf(mixed)).toBe('portal_access_denied');
    expect(mixed.body.data ?? null).toBeNull();
  });

  it('records every portal change as a webhooks.portal.* event with the session ID', async () => {
    // Read from the table: GET /events shows only what transactions older than every running one wrote, and other
    // test files share the Postgres cluster.
    const portalEvents: { type: string; data: { session_id: string } }[] = await h.services.db.query(
      `SELECT type, data FROM operational_events WHERE tenant_id = $1 AND type LIKE 'webhooks.portal.%'`,
      [mine['tenant']],
    );
    const types = new Set(portalEvents.map((event) => event.type));
    for (const type of [
      'webhooks.portal.session.opened',
      'webhooks.portal.endpoint.created',
      'webhooks.portal.endpoint.secret_rotated',
      'webhooks.portal.endpoint.secret_revealed',
      'webhooks.portal.endpoint.tested',
    ])
      expect(types, type).toContain(type);
    const sessionIds = new Set(portalEvents.map((event) => event.data.session_id));
    expect(sessionIds.size).toBe(1);
  });
});
