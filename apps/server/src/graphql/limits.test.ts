import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getIntrospectionQuery, Kind, parse, type OperationDefinitionNode } from 'graphql';
import { startHarness, type Harness } from '../testing/harness.js';
import { checkOperationLimits, measureOperation, OPERATION_LIMITS } from './operation-limits.js';
import { aliased, graphqlClient } from './test-client.js';

let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
});
afterAll(async () => {
  await h.close();
});

const createTenants = (from: number, count: number) =>
  `mutation { ${aliased(count, (i) => `createTenant(input: { externalId: "batch-${from + i}", name: "Batch" }) { id }`)} }`;

async function tenantCount(key: string): Promise<number> {
  const list = await gql('{ tenants(first: 100) { nodes { id } } }', {}, { key });
  return list.body.data.tenants.nodes.length;
}

describe('GraphQL rate tokens: a root field that reads at most one page costs one token', () => {
  it('aliased mutations drain the config-write bucket field by field; the refused document runs nothing', async () => {
    // The config-write burst is 40 and the manual clock stands still, so no token comes back during the test.
    const team = await h.newTeam('aliases');
    const first = await gql(createTenants(0, 20), {}, { key: team.key });
    expect(first.body.errors).toBeUndefined();
    expect(Object.keys(first.body.data)).toHaveLength(20);
    const second = await gql(createTenants(20, 20), {}, { key: team.key });
    expect(second.body.errors).toBeUndefined();

    const third = await gql(createTenants(40, 2), {}, { key: team.key });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(third.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'rate_limited' } })]);
    expect(third.body.data).toBeUndefined();
    expect(await tenantCount(team.key)).toBe(40);

    // Reads are counted in their own bucket.
    const read = await gql('{ viewer { teamId } }', {}, { key: team.key });
    expect(read.body.data.viewer.teamId).toBe(team.teamId);
  });

  it('aliased queries cost one read token each', async () => {
    // The read burst is 200: ten documents of 20 aliased queries spend it all.
    const team = await h.newTeam('read-aliases');
    const query = `{ ${aliased(20, () => 'viewer { teamId }')} }`;
    for (let i = 0; i < 10; i += 1) {
      const answer = await gql(query, {}, { key: team.key });
      expect(answer.body.errors, `document ${i}`).toBeUndefined();
    }
    const refused = await gql('{ viewer { teamId } }', {}, { key: team.key });
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions.code).toBe('rate_limited');
  });

  it('introspection costs nothing and needs no key', async () => {
    const answer = await gql('{ __schema { queryType { name } } }', {}, { key: null });
    expect(answer.body.data.__schema.queryType.name).toBe('Query');
  });

  it('an unauthenticated request is refused once, with 401, and no resolver runs', async () => {
    const answer = await gql(createTenants(100, 3), {}, { key: null });
    expect(answer.status).toBe(401);
    expect(answer.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'unauthorized' } })]);
  });
});

describe('GraphQL operation limits', () => {
  const refusedWithInvalidField = (answer: { status: number; body: { errors?: unknown[]; data?: unknown } }) => {
    expect(answer.status).toBe(422);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ extensions: { code: 'invalid_field', field: 'query' } }),
    ]);
  };

  it(`refuses 50 aliased createTenant mutations (over ${OPERATION_LIMITS.rootFields} root fields) before any runs`, async () => {
    const team = await h.newTeam('fifty');
    const answer = await gql(createTenants(0, 50), {}, { key: team.key });
    refusedWithInvalidField(answer);
    expect(answer.body.errors[0].message).toContain('50 root fields');
    expect(await tenantCount(team.key)).toBe(0);
  });

  it('counts root fields spread from fragments', async () => {
    const fragment = `fragment many on Query { ${aliased(15, () => 'viewer { teamId }')} }`;
    const answer = await gql(`{ ...many ... on Query { ...many } } ${fragment}`);
    refusedWithInvalidField(answer);
    expect(answer.body.errors[0].message).toContain('30 root fields');
  });

  it(`refuses more than ${OPERATION_LIMITS.aliases} aliases anywhere in the operation`, async () => {
    const nodes = aliased(31, () => 'id');
    const answer = await gql(`{ tenants(first: 1) { nodes { ${nodes} } } }`);
    refusedWithInvalidField(answer);
    expect(answer.body.errors[0].message).toContain('31 aliases');
    const within = await gql(`{ tenants(first: 1) { nodes { ${aliased(30, () => 'id')} } } }`);
    expect(within.body.errors).toBeUndefined();
  });

  it(`measures nesting through fragments and refuses more than ${OPERATION_LIMITS.depth} levels`, () => {
    // No type of today's schema nests that deep, so the rule is checked on the document alone.
    const nested = (levels: number) => `${'{ a '.repeat(levels - 1)}{ leaf }${' }'.repeat(levels - 1)}`;
    const shape = (source: string) => {
      const document = parse(source);
      const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
      return measureOperation(document, operation as OperationDefinitionNode);
    };
    expect(shape(nested(8)).depth).toBe(8);
    expect(() => checkOperationLimits(shape(nested(8)))).not.toThrow();
    expect(() => checkOperationLimits(shape(nested(9)))).toThrow(/9 levels of nesting; at most 8/);
    const viaFragments = shape('{ a { ...f } } fragment f on T { b { ... on T { c { d } } } }');
    expect(viaFragments).toMatchObject({ depth: 4, rootFields: 1 });
  });

  it('answers the standard introspection query (deeper than the limit, but introspection is exempt)', async () => {
    const answer = await gql(getIntrospectionQuery(), {}, { key: null });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.__schema.mutationType.name).toBe('Mutation');
  });
});
