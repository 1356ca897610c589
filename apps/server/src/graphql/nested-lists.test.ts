import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, type OperationDefinitionNode } from 'graphql';
import { countRoundTrips } from '@svc/db';
import { newId } from '@svc/core';
import { PER_REQUEST_STATEMENTS, post, startHarness, type Harness } from '../testing/harness.js';
import { COST_RULES, measureCost } from './operation-cost.js';
import { buildGraphqlSchema } from './schema.js';
import { graphqlClient } from './test-client.js';

let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
const MESSAGES = 20;
const ENDPOINTS = 5;
const ATTEMPTS = 2;
let messageIds: string[] = [];

/** The harness clock stands still; lists end before it by default (created_before is exclusive). */
const AFTER_NOW = '2026-11-02T10:00:01.000Z';

beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  await post(h, '/event_types', { name: 'order.created' });
  const tenantId = (await post(h, '/tenants', { external_id: 'nested', name: 'Nested' })).json.id as string;
  for (let i = 0; i < ENDPOINTS; i += 1) {
    const endpoint = await post(h, '/endpoints', { tenant_id: tenantId, url: `https://receiver.example.com/${i}` });
    expect(endpoint.status, endpoint.text).toBe(201);
  }
  for (let i = 0; i < MESSAGES; i += 1) {
    const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: { i } });
    expect(message.status, message.text).toBe(202);
    messageIds.push(message.json.id as string);
  }
  // Two attempts per delivery, written as the engine's settlement writes them (a failure, then a success).
  const deliveries: { id: string; endpoint_id: string }[] = await h.services.db.query(
    `SELECT id, endpoint_id FROM deliveries WHERE team_id = $1 ORDER BY id`,
    [h.team.teamId],
  );
  expect(deliveries).toHaveLength(MESSAGES * ENDPOINTS);
  const now = h.clock.now();
  const attempts = deliveries.flatMap((delivery) =>
    Array.from({ length: ATTEMPTS }, (_, n) => [newId('attempt', h.clock), delivery.id, delivery.endpoint_id, n + 1]),
  );
  await h.services.db.query(
    `INSERT INTO attempts (id, delivery_id, team_id, endpoint_id, number, trigger, started_at, duration_ms,
                           url_revision, status_code, created_at)
     SELECT a.id, a.delivery_id, $2, a.endpoint_id, a.number, CASE WHEN a.number = 1 THEN 'scheduled' ELSE 'retry' END,
            $3, 12, 1, CASE WHEN a.number = 1 THEN 500 ELSE 200 END, $3
       FROM unnest($1::text[], $4::text[], $5::text[], $6::int[]) AS a(id, delivery_id, endpoint_id, number)`,
    [
      attempts.map((a) => a[0]),
      h.team.teamId,
      now,
      attempts.map((a) => a[1]),
      attempts.map((a) => a[2]),
      attempts.map((a) => a[3]),
    ],
  );
  messageIds = messageIds.sort();
});
afterAll(async () => {
  await h.close();
});

const NESTED = `query($n: Int, $m: Int, $k: Int) {
  messages(first: $n, createdBefore: "${AFTER_NOW}") {
    nodes { id deliveries(first: $m) { nodes { id attempts(first: $k) { nodes { id number } nextCursor } } nextCursor } }
    nextCursor
  }
}`;

interface NestedAnswer {
  messages: {
    nodes: {
      id: string;
      deliveries: { nodes: { id: string; attempts: { nodes: { id: string }[] } }[] };
    }[];
  };
}

/** Postgres statements of one request's lists, without the per-request ones (the server runs in this process); the least of three. */
async function statements(query: string, variables: Record<string, unknown>): Promise<number> {
  const measure = async () => {
    const counter = countRoundTrips({ ignoring: PER_REQUEST_STATEMENTS });
    try {
      const answer = await gql(query, variables);
      expect(answer.body.errors).toBeUndefined();
      return counter.count;
    } finally {
      counter.close();
    }
  };
  return Math.min(await measure(), await measure(), await measure());
}

describe('nested lists load in batches: one statement per level per request', () => {
  it(`${MESSAGES} messages x ${ENDPOINTS} deliveries x ${ATTEMPTS} attempts cost as many statements as 1 x 1 x 1`, async () => {
    const full = await gql(NESTED, { n: MESSAGES, m: ENDPOINTS, k: ATTEMPTS });
    expect(full.body.errors).toBeUndefined();
    const data = full.body.data as NestedAnswer;
    expect(data.messages.nodes.map((m) => m.id)).toEqual(messageIds);
    const attempts = data.messages.nodes.flatMap((m) => m.deliveries.nodes.flatMap((d) => d.attempts.nodes));
    expect(attempts).toHaveLength(MESSAGES * ENDPOINTS * ATTEMPTS);

    const many = await statements(NESTED, { n: MESSAGES, m: ENDPOINTS, k: ATTEMPTS });
    const one = await statements(NESTED, { n: 1, m: 1, k: 1 });
    // messages, their deliveries, their attempts: three levels, three statements (was 1 + 20 + 2 x 100 = 221).
    expect(many).toBeLessThanOrEqual(3);
    expect(many).toBe(one);
  });

  it('aliases of the same lists stay within one statement per level and alias', async () => {
    // Aliased root fields resolve apart, so each alias's levels are batched on their own: 3 x 3 statements (rate
    // tokens and the key's lookup are not counted).
    const aliased = `query($n: Int, $m: Int, $k: Int) {
      ${['a', 'b', 'c']
        .map(
          (alias) => `${alias}: messages(first: $n, createdBefore: "${AFTER_NOW}") {
            nodes { deliveries(first: $m) { nodes { attempts(first: $k) { nodes { id } } } } } }`,
        )
        .join('\n')}
    }`;
    expect(await statements(aliased, { n: MESSAGES, m: ENDPOINTS, k: ATTEMPTS })).toBeLessThanOrEqual(9);
  });

  it("every other per-parent field is batched too: endpoints' replays, sources' captures and rejections", async () => {
    const tenantId = (await post(h, '/tenants', { external_id: 'nested-sources', name: 'Sources' })).json.id as string;
    for (let i = 0; i < 4; i += 1) {
      const source = await post(h, '/sources', {
        tenant_id: tenantId,
        name: `source-${i}`,
        verification: { kind: 'bearer' },
        event_type: 'order.created',
      });
      expect(source.status, source.text).toBe(201);
    }
    const query = `query($n: Int) {
      endpoints(first: $n) { nodes { id replays(first: 3) { nodes { id } } } }
      sources(first: $n) { nodes { id recentMessages(first: 3) { id } recentRejections(first: 3) { id } } }
    }`;
    const answer = await gql(query, { n: 10 });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.endpoints.nodes).toHaveLength(ENDPOINTS);
    expect(answer.body.data.sources.nodes).toHaveLength(4);
    // Two root lists and three per-parent fields: five statements however many endpoints and sources there are
    // (were 2 + 5 + 2 x 4 = 15).
    const many = await statements(query, { n: 10 });
    expect(many).toBeLessThanOrEqual(5);
    expect(many).toBe(await statements(query, { n: 1 }));
  });

  it('the support views (newest first, repaired marks and counts) cost no statement per row', async () => {
    const query = `query($n: Int, $m: Int) {
      messages(first: $n, order: newest, createdBefore: "${AFTER_NOW}") {
        nodes { id repairedCount deliveryCounts { failed } deliveries(first: $m) { nodes { id repairedBy } } }
      }
      deliveries(first: $n, order: newest, repaired: false, createdBefore: "${AFTER_NOW}") { nodes { id repairedBy } }
      events(first: $n, order: newest) { nodes { id } }
    }`;
    const answer = await gql(query, { n: MESSAGES, m: ENDPOINTS });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.messages.nodes.map((m: { id: string }) => m.id)).toEqual([...messageIds].reverse());
    expect(answer.body.data.deliveries.nodes).toHaveLength(MESSAGES);
    // Three root lists and one nested level: four statements however many rows they read.
    const many = await statements(query, { n: MESSAGES, m: ENDPOINTS });
    expect(many).toBeLessThanOrEqual(4);
    expect(many).toBe(await statements(query, { n: 1, m: 1 }));
  });

  it('pages of a nested list are the pages of the list itself: same items, same order, same cursors', async () => {
    const messageId = messageIds[3]!;
    const message = (await h.request('GET', `/messages/${messageId}`)).json as { created_at: string };
    const windowEnd = new Date(Date.parse(message.created_at) + 30 * 86_400_000).toISOString();
    const nestedPage = async (after: string | null) =>
      (
        await gql(
          `query($id: ID!, $after: String) {
            message(id: $id) { deliveries(first: 2, after: $after) { nodes { id } nextCursor } } }`,
          { id: messageId, after },
        )
      ).body.data.message.deliveries as { nodes: { id: string }[]; nextCursor: string | null };
    const listPage = async (after: string | null) =>
      (
        await gql(
          `query($id: ID!, $from: DateTimeISO, $to: DateTimeISO, $after: String) {
            deliveries(messageId: $id, createdAfter: $from, createdBefore: $to, first: 2, after: $after) {
              nodes { id } nextCursor } }`,
          { id: messageId, from: message.created_at, to: windowEnd, after },
        )
      ).body.data.deliveries as { nodes: { id: string }[]; nextCursor: string | null };
    let after: string | null = null;
    const walked: string[] = [];
    do {
      const nested = await nestedPage(after);
      expect(nested).toEqual(await listPage(after));
      walked.push(...nested.nodes.map((node) => node.id));
      after = nested.nextCursor;
    } while (after !== null);
    expect(walked).toHaveLength(ENDPOINTS);

    // The first page of every message, loaded together, is each message's own first page.
    const together = await gql(
      `{ messages(first: ${MESSAGES}, createdBefore: "${AFTER_NOW}") {
        nodes { id deliveries(first: 2) { nodes { id attempts(first: 1) { nodes { id } nextCursor } } nextCursor } } } }`,
    );
    const pages = together.body.data.messages.nodes as {
      id: string;
      deliveries: { nodes: { id: string; attempts: { nodes: { id: string }[]; nextCursor: string } }[] };
    }[];
    const alone = await gql(
      `query($id: ID!) { message(id: $id) { deliveries(first: 2) { nodes { id } nextCursor } } }`,
      {
        id: messageId,
      },
    );
    expect(pages.find((page) => page.id === messageId)!.deliveries).toMatchObject(alone.body.data.message.deliveries);

    // Attempts: the nested page and its cursor are GET /deliveries/{id}/attempts's, and either cursor continues both.
    const delivery = pages[0]!.deliveries.nodes[0]!;
    const rest = await h.request('GET', `/deliveries/${delivery.id}/attempts?limit=1`);
    expect(delivery.attempts.nodes.map((node) => node.id)).toEqual(rest.json.data.map((a: { id: string }) => a.id));
    expect(delivery.attempts.nextCursor).toBe(rest.json.next_cursor);
    const restNext = await h.request(
      'GET',
      `/deliveries/${delivery.id}/attempts?limit=1&cursor=${rest.json.next_cursor}`,
    );
    const nestedNext = await gql(
      `query($id: ID!, $after: String) { delivery(id: $id) { attempts(first: 1, after: $after) { nodes { id } nextCursor } } }`,
      { id: delivery.id, after: delivery.attempts.nextCursor },
    );
    expect(nestedNext.body.data.delivery.attempts).toEqual({
      nodes: restNext.json.data.map((a: { id: string }) => ({ id: a.id })),
      nextCursor: restNext.json.next_cursor,
    });
  });

  it('a bad cursor fails its own field, not its siblings', async () => {
    const answer = await gql(
      `query($id: ID!) { message(id: $id) { good: deliveries(first: 1) { nodes { id } } bad: deliveries(after: "x") { nodes { id } } } }`,
      { id: messageIds[0] },
    );
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ path: ['message', 'bad'], extensions: { code: 'invalid_cursor', field: 'cursor' } }),
    ]);
    expect(answer.body.data).toBeNull();
  });
});

describe('GraphQL cost: page sizes multiplied down the nesting, before anything runs', () => {
  it('refuses an operation over the budget with 422 naming the budget, before any statement', async () => {
    const query = `{ messages(first: 100) { nodes { deliveries(first: 50) { nodes { attempts(first: 50) { nodes { id } } } } } } }`;
    const counter = countRoundTrips();
    const answer = await gql(query);
    expect(counter.count).toBe(0);
    expect(answer.status).toBe(422);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ extensions: { code: 'invalid_field', field: 'query' } }),
    ]);
    expect(answer.body.errors[0].message).toContain('255,100 rows');
    expect(answer.body.errors[0].message).toContain(`budget is ${COST_RULES.budget.toLocaleString('en-US')} rows`);

    // The same through variables and a fragment; and without a key (the cost is checked before authentication).
    const viaVariables = await gql(
      `query($n: Int) { messages(first: $n) { ...m } } fragment m on MessageConnection {
        nodes { deliveries(first: $n) { nodes { id } } } }`,
      { n: 200 },
      { key: null },
    );
    expect(viaVariables.status).toBe(422);
    expect(viaVariables.body.errors[0].message).toContain('40,200 rows');
  });

  it('takes rate tokens in proportion to the rows an operation can read', async () => {
    // The read burst is 200 tokens and the manual clock stands still. 200 + 200 x 90 = 18,200 rows is 91 tokens.
    const team = await h.newTeam('cost-tokens');
    const heavy = `{ messages(first: 200) { nodes { deliveries(first: 90) { nodes { id } } } } }`;
    expect((await gql(heavy, {}, { key: team.key })).body.errors).toBeUndefined();
    expect((await gql(heavy, {}, { key: team.key })).body.errors).toBeUndefined();
    // 182 tokens spent: 18 remain, fewer than the 91 the document needs.
    const refused = await gql(heavy, {}, { key: team.key });
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions.code).toBe('rate_limited');
  });

  it('measures page sizes from literals, variables, variable defaults and schema defaults', async () => {
    const schema = await buildGraphqlSchema({ publicBaseUrl: null });
    const rows = (source: string, variables: Record<string, unknown> = {}) => {
      const document = parse(source);
      return measureCost(schema, document, document.definitions[0] as OperationDefinitionNode, variables).rows;
    };
    // A root field without a page reads one row; the lists' default page is 50; recentMessages' is 20.
    expect(rows('{ viewer { teamId } }')).toBe(1);
    expect(rows('{ messages { nodes { id } } }')).toBe(50);
    expect(rows('{ source(id: "s") { recentMessages { id } } }')).toBe(1 + 20);
    expect(
      rows('{ message(id: "m") { deliveries(first: 100) { nodes { attempts(first: 100) { nodes { id } } } } } }'),
    ).toBe(1 + 100 + 100 * 100);
    expect(rows('query($k: Int = 7) { messages(first: 3) { nodes { deliveries(first: $k) { nodes { id } } } } }')).toBe(
      3 + 3 * 7,
    );
    expect(rows('query($k: Int) { messages(first: $k) { nodes { id } } }', { k: 9 })).toBe(9);
    // Past the largest page the list refuses the request; the cost counts what it could read, 200.
    expect(rows('{ messages(first: 5000) { nodes { id } } }')).toBe(200);
    // Siblings add up, fragments multiply like the fields they stand for, introspection is free.
    expect(
      rows(`{ a: endpoints(first: 10) { ...e } b: endpoints(first: 2) { ...e } __schema { types { name } } }
        fragment e on EndpointConnection { nodes { replays(first: 4) { nodes { id } } } }`),
    ).toBe(10 + 10 * 4 + 2 + 2 * 4);
  });
});
