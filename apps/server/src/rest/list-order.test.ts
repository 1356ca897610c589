import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';
import { graphqlClient } from '../graphql/test-client.js';

/**
 * The support lists read newest first (`order=newest`, an extension), walked page by page on the machine's clock with
 * time passing between pages, like paging-real-clock.test.ts: the window the first page resolved stays, so "now"
 * moving does not break page 2. Rows share milliseconds (a message's deliveries are created together, and concurrent
 * admissions in one batch share a clock reading), and the page size splits those groups.
 */
const PAUSE_MS = 300;

let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let tenantId: string;
const endpointIds: string[] = [];
const messageIds: string[] = [];
let deadLetterCount = 0;

const failure: AttemptResult = { kind: 'response', status: 400, retryAfterSeconds: null };

async function publish(n: number): Promise<string> {
  const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.event', payload: { n } });
  expect(message.status, message.text).toBe(202);
  return message.json.id as string;
}

/** Messages created in one millisecond (one admission batch), at least two. */
async function sameMillisecondGroups(): Promise<number> {
  const [row] = await h.services.db.query(
    `SELECT count(*)::int AS n FROM (SELECT created_at FROM messages WHERE team_id = $1 GROUP BY 1 HAVING count(*) > 1) x`,
    [h.team.teamId],
  );
  return row.n as number;
}

beforeAll(async () => {
  h = await startHarness({ realClock: true });
  gql = graphqlClient(h);
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'order', name: 'Order' })).json.id;
  await post(h, '/event_types', { name: 'order.event' });
  for (const name of ['a', 'b', 'c']) {
    const endpoint = await post(h, '/endpoints', { tenant_id: tenantId, url: `https://receiver.example.com/${name}` });
    expect(endpoint.status, endpoint.text).toBe(201);
    endpointIds.push(endpoint.json.id);
  }
  for (let n = 0; n < 3; n += 1) messageIds.push(await publish(n));
  // Concurrent admissions share a batch and its clock reading: publish at once until some messages share a millisecond.
  // Four at once: a team has 4 admission slots, and a slow machine keeps all of them busy at the same moment.
  // At least two rounds, so that the walks below span several pages.
  for (let round = 0; round < 8 && (round < 2 || (await sameMillisecondGroups()) === 0); round += 1)
    messageIds.push(...(await Promise.all(Array.from({ length: 4 }, (_, i) => publish(10 * (round + 1) + i)))));
  expect(await sameMillisecondGroups()).toBeGreaterThan(0);
  // The first endpoint refuses everything: its deliveries are dead letters (and webhooks.delivery.failed events).
  const steps = new EngineSteps(h.services);
  const [{ ids }] = await h.services.db.query(
    `SELECT array_agg(id ORDER BY id) AS ids FROM deliveries WHERE endpoint_id = $1`,
    [endpointIds[0]],
  );
  // At most max_concurrency attempts of an endpoint run at once: claim and settle until every one has failed.
  for (let round = 0; round < ids.length; round += 1) {
    const claimed = await steps.claim(ids);
    if (claimed.length === 0) break;
    await steps.settle(
      claimed.map((attempt) => ({ attempt, result: failure, durationMs: 3, responseBody: null, jitter: 0 })),
    );
  }
  deadLetterCount = ids.length;
});
afterAll(async () => {
  await h.close();
});

function withQuery(path: string, query: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}${query}`;
}

/** Pages through `path` `limit` items at a time, pausing between pages; the IDs in the order listed. */
async function walk(path: string, limit = 2, between?: () => Promise<void>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  for (;;) {
    if (pages > 0) {
      await sleep(PAUSE_MS);
      await between?.();
    }
    const page = await h.request('GET', withQuery(path, `limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`));
    expect(page.status, `page ${pages + 1} of ${path}: ${page.text}`).toBe(200);
    pages += 1;
    ids.push(...page.json.data.map((item: { id: string }) => item.id));
    cursor = page.json.next_cursor;
    // The oldest-first event feed names a position on every non-empty page; an empty page is its end.
    if (cursor === null || page.json.data.length === 0) break;
  }
  expect(pages).toBeGreaterThanOrEqual(3);
  return ids;
}

/** The whole list in one page. */
async function all(path: string): Promise<{ id: string; created_at: string }[]> {
  const page = await h.request('GET', withQuery(path, 'limit=200'));
  expect(page.status, page.text).toBe(200);
  expect(page.json.next_cursor === null || path.startsWith('/events')).toBe(true);
  return page.json.data;
}

/** Whether neighbours of the list share a millisecond, so that pages of two split such a group. */
function sharesMilliseconds(items: readonly { created_at: string }[]): boolean {
  return items.some((item, i) => i > 0 && item.created_at === items[i - 1]!.created_at);
}

/** Waits until the event feed lists at least `n` events of the type (it waits for older transactions to end). */
async function eventsOfType(type: string, n: number): Promise<string[]> {
  const deadline = Date.now() + 15_000;
  let events = await all(`/events?type=${type}`);
  while (events.length < n && Date.now() < deadline) {
    await sleep(100);
    events = await all(`/events?type=${type}`);
  }
  expect(events.length).toBeGreaterThanOrEqual(n);
  return events.map((event) => event.id);
}

describe('newest first on the real clock', () => {
  it('GET /messages: the reverse of oldest first, over pages that split a millisecond, alone and filtered', async () => {
    const oldest = await all('/messages');
    expect(oldest.map((m) => m.id).sort()).toEqual([...messageIds].sort());
    expect(sharesMilliseconds(oldest)).toBe(true);
    const reversed = oldest.map((m) => m.id).reverse();
    expect(await walk('/messages?order=newest')).toEqual(reversed);
    expect(await walk(`/messages?order=newest&tenant_id=${tenantId}`, 3)).toEqual(reversed);
    expect(await walk('/messages?order=oldest')).toEqual(oldest.map((m) => m.id));
    expect((await all('/messages?order=newest')).map((m) => m.id)).toEqual(reversed);
  });

  it('GET /messages: the window of the first page stays; a later message tops the next first page', async () => {
    const before = (await all('/messages')).map((m) => m.id).reverse();
    let later: string | null = null;
    const walked = await walk('/messages?order=newest', 4, async () => {
      later ??= await publish(999);
    });
    expect(walked).toEqual(before);
    expect(later).not.toBeNull();
    const first = await h.request('GET', '/messages?order=newest&limit=1');
    expect(first.json.data.map((m: { id: string }) => m.id)).toEqual([later]);
    messageIds.push(later!);
  });

  it('GET /deliveries: all, by endpoint, and the dead letters (also without repaired ones)', async () => {
    const oldest = await all('/deliveries');
    expect(oldest).toHaveLength(messageIds.length * endpointIds.length);
    expect(sharesMilliseconds(oldest)).toBe(true);
    expect(await walk('/deliveries?order=newest', 4)).toEqual(oldest.map((d) => d.id).reverse());
    for (const path of [
      `/deliveries?endpoint_id=${endpointIds[1]}`,
      '/deliveries?status=failed',
      '/deliveries?status=failed&repaired=false',
      `/deliveries?status=queued&tenant_id=${tenantId}`,
    ]) {
      const listed = await all(path);
      expect(listed.length, path).toBeGreaterThanOrEqual(3);
      expect(await walk(withQuery(path, 'order=newest')), path).toEqual(listed.map((d) => d.id).reverse());
    }
    const deadLetters = await all('/deliveries?status=failed');
    expect(deadLetters).toHaveLength(deadLetterCount);
    expect(sharesMilliseconds(deadLetters)).toBe(true);
  });

  it('GET /events: the same events as the feed, read from the other end, and the list ends', async () => {
    for (let n = 0; n < 5; n += 1) {
      const source = await post(h, '/sources', {
        tenant_id: tenantId,
        name: `rejecting ${n}`,
        event_type: 'order.event',
        verification: { kind: 'bearer' },
      });
      expect(source.status, source.text).toBe(201);
      const refused = await h.request('POST', `${h.rootUrl}${new URL(source.json.receive_url).pathname}`, {
        key: null,
        headers: { authorization: 'Bearer not-the-secret-of-this-source' },
        body: { n },
      });
      expect(refused.status).toBe(401);
    }
    const rejected = await eventsOfType('webhooks.source.rejected', 5);
    expect(await walk('/events?type=webhooks.source.rejected&order=newest')).toEqual([...rejected].reverse());
    await eventsOfType('webhooks.delivery.failed', 1);
    const feed = (await all('/events')).map((event) => event.id);
    expect(await walk('/events?order=newest', 2)).toEqual([...feed].reverse());
    const last = await h.request('GET', `/events?order=newest&limit=${feed.length}`);
    expect(last.json.next_cursor).toBeNull();
  });

  it('GraphQL messages, deliveries and events take order: newest', async () => {
    const walkGraphql = async (field: string, args: string): Promise<string[]> => {
      const ids: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        if (pages > 0) await sleep(PAUSE_MS);
        const answer = await gql(
          `query($after: String) { ${field}(${args} order: newest, first: 2, after: $after) { nodes { id } nextCursor } }`,
          { after },
        );
        expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
        ids.push(...answer.body.data[field].nodes.map((node: { id: string }) => node.id));
        after = answer.body.data[field].nextCursor;
        pages += 1;
      } while (after !== null);
      expect(pages).toBeGreaterThanOrEqual(3);
      return ids;
    };
    expect(await walkGraphql('messages', '')).toEqual((await all('/messages')).map((m) => m.id).reverse());
    expect(await walkGraphql('deliveries', `endpointId: "${endpointIds[0]}", status: failed,`)).toEqual(
      (await all(`/deliveries?endpoint_id=${endpointIds[0]}&status=failed`)).map((d) => d.id).reverse(),
    );
    expect(await walkGraphql('events', '')).toEqual((await all('/events')).map((e) => e.id).reverse());
  });

  it('a cursor continues only its own order: any other is 422 invalid_cursor', async () => {
    for (const path of ['/messages', '/deliveries', '/events']) {
      const newest = await h.request('GET', `${path}?order=newest&limit=2`);
      const oldest = await h.request('GET', `${path}?limit=2`);
      const newestCursor = newest.json.next_cursor as string;
      const oldestCursor = oldest.json.next_cursor as string;
      expect(newestCursor, path).toEqual(expect.any(String));
      expect(oldestCursor, path).toEqual(expect.any(String));
      await sleep(PAUSE_MS);
      for (const query of [
        `limit=2&cursor=${newestCursor}`,
        `order=oldest&limit=2&cursor=${newestCursor}`,
        `order=newest&limit=2&cursor=${oldestCursor}`,
      ]) {
        const refused = await h.request('GET', `${path}?${query}`);
        expect(refused.status, `${path}?${query}`).toBe(422);
        expect(refused.json.error.code).toBe('invalid_cursor');
      }
      // oldest is the default order: written out or not, its cursor continues.
      const continued = await h.request('GET', `${path}?order=oldest&limit=2&cursor=${oldestCursor}`);
      expect(continued.status, continued.text).toBe(200);
      const again = await h.request('GET', `${path}?order=newest&limit=2&cursor=${newestCursor}`);
      expect(again.status, again.text).toBe(200);
    }
    const first = await gql('{ messages(order: newest, first: 2) { nextCursor } }');
    const crossed = await gql('query($after: String) { messages(first: 2, after: $after) { nextCursor } }', {
      after: first.body.data.messages.nextCursor,
    });
    expect(crossed.body.errors[0].extensions.code).toBe('invalid_cursor');
    const sideways = await h.request('GET', '/messages?order=sideways');
    expect(sideways.status).toBe(422);
    expect(sideways.json.error).toMatchObject({ code: 'invalid_field', field: 'order' });
  });
});
