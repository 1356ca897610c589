import { describe, expect, it } from 'vitest';
import { rootFieldAccess } from './authorization.js';
import { buildGraphqlSchema } from './schema.js';

describe('GraphQL authorization declarations', () => {
  it('every Query and Mutation field declares @Authorized() (a key) or @Authorized(PUBLIC)', async () => {
    const schema = await buildGraphqlSchema();
    const access = rootFieldAccess(schema);
    const rootFields = [schema.getQueryType(), schema.getMutationType()].flatMap((type) =>
      type ? Object.keys(type.getFields()).map((name) => `${type.name}.${name}`) : [],
    );
    expect(rootFields.length).toBeGreaterThan(20);
    expect([...access.keys()].sort()).toEqual([...rootFields].sort());
    const undeclared = [...access].filter(([, kind]) => kind === 'undeclared').map(([field]) => field);
    expect(undeclared, 'add @Authorized() or, for a field that needs no key, @Authorized(PUBLIC)').toEqual([]);
    // Everything that reads or changes a team's data needs a key.
    for (const field of [
      'Query.viewer',
      'Query.endpoints',
      'Query.messageContent',
      'Query.events',
      'Mutation.createEndpoint',
      'Mutation.updateSettings',
      'Mutation.redactMessage',
      'Mutation.replayDelivery',
      'Query.sources',
      'Query.source',
      'Query.verifierKinds',
      'Mutation.createSource',
      'Mutation.updateSource',
      'Mutation.deleteSource',
      'Mutation.rotateSourceSecret',
      'Mutation.rotateSourceToken',
      'Query.replays',
      'Query.replay',
      'Query.replayEstimate',
      'Mutation.startReplay',
      'Mutation.cancelReplay',
      'Query.analytics',
    ])
      expect(access.get(field), field).toBe('key');
  });
});
