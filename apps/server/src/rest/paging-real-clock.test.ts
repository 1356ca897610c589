import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';
import { graphqlClient } from '../graphql/test-client.js';

/**
 * Every list walked page by page on the machine's clock, with time passing between the pages: a list whose default
 * window ends "now" must continue with its cursor although "now" has moved (docs/api-choices.md, Lists and
 * cursors). Windows have millisecond resolution; the pause between pages is far longer.
 */
const PAUSE_MS = 300;

let h: Harness;
let tenantId: string;
let endpointId: string;
let otherEndpointId: string;
const messageIds: string[] = [];

beforeAll(async () => {
  h = await startHarness({ realClock: true });
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'paging', name: 'Paging' })).json.id;
  await post(h, '/event_types', { name: 'paging.event' });
  endpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/a' })).json.id;
  otherEndpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/b' })).json
    .id;
  for (let n = 0; n < 5; n += 1) {
    const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'paging.event', payload: { n } });
    expect(message.status, message.text).toBe(202);
    messageIds.push(message.json.id);
  }
});
afterAll(async () => {
  await h.close();
});

/** Pages through `path` `limit` items at a time, pausing between pages; answers the IDs in the order listed. */
async function walk(path: string, limit = 2): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  for (;;) {
    if (pages > 0) await sleep(PAUSE_MS);
    const separator = path.includes('?') ? '&' : '?';
    const page = await h.request('GET', `${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status, `page ${pages + 1} of ${path}: ${page.text}`).toBe(200);
    pages += 1;
    ids.push(...page.json.data.map((item: { id: string }) => item.id));
    cursor = page.json.next_cursor;
    // The operational event feed names a position on every non-empty page; an empty page is its end.
    if (cursor === null || page.json.data.length === 0) break;
  }
  expect(pages).toBeGreaterThanOrEqual(2);
  return ids;
}

/** The whole list in one page, for comparison. */
async function all(path: string): Promise<string[]> {
  const separator = path.includes('?') ? '&' : '?';
  const page = await h.request('GET', `${path}${separator}limit=200`);
  expect(page.status, page.text).toBe(200);
  return page.json.data.map((item: { id: string }) => item.id);
}

describe('paging on the real clock', () => {
  it('GET /messages with the default window, alone and with filters', async () => {
    expect(await walk('/messages')).toEqual(messageIds);
    expect(await walk(`/messages?tenant_id=${tenantId}`)).toEqual(messageIds);
    expect(await walk(`/messages?tenant_id=${tenantId}&event_type=paging.event`)).toEqual(messageIds);
  });

  it('GraphQL messages and deliveries with the default window', async () => {
    const graphql = graphqlClient(h);
    const walkGraphql = async (field: 'messages' | 'deliveries', args: string): Promise<string[]> => {
      const ids: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        if (pages > 0) await sleep(PAUSE_MS);
        const answer = await graphql(
          `query($after: String) { ${field}(${args}, first: 2, after: $after) { nodes { id } nextCursor } }`,
          { after },
        );
        expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
        ids.push(...answer.body.data[field].nodes.map((node: { id: string }) => node.id));
        after = answer.body.data[field].nextCursor;
        pages += 1;
      } while (after !== null);
      expect(pages).toBe(3);
      return ids;
    };
    expect(await walkGraphql('messages', `tenantId: "${tenantId}"`)).toEqual(messageIds);
    expect(await walkGraphql('deliveries', `endpointId: "${endpointId}"`)).toEqual(
      await all(`/deliveries?endpoint_id=${endpointId}`),
    );
  });

  it('GET /messages with only created_after: the window is the first page one, not 30 days from a later now', async () => {
    // The window is at most 30 days: with "now" recomputed, the second page would find it too long.
    const after = new Date(Date.now() - 30 * 24 * 3600 * 1000 + 2 * PAUSE_MS).toISOString();
    expect(await walk(`/messages?created_after=${after}`)).toEqual(messageIds);
  });

  it('GET /deliveries with the default window, alone and by endpoint, status, message and tenant', async () => {
    const deliveries = await all('/deliveries');
    expect(deliveries).toHaveLength(10);
    expect(await walk('/deliveries')).toEqual(deliveries);
    expect(await walk(`/deliveries?endpoint_id=${endpointId}`)).toEqual(
      await all(`/deliveries?endpoint_id=${endpointId}`),
    );
    expect(await walk('/deliveries?status=queued')).toEqual(await all('/deliveries?status=queued'));
    expect(await walk(`/deliveries?tenant_id=${tenantId}&kind=original`)).toEqual(deliveries);
    const ofMessage = await all(`/deliveries?message_id=${messageIds[0]}`);
    expect(ofMessage).toHaveLength(2);
    expect(await walk(`/deliveries?message_id=${messageIds[0]}`, 1)).toEqual(ofMessage);
  });

  it('GET /deliveries/{id}/attempts', async () => {
    const [delivery] = await h.services.db.query(
      'SELECT id FROM deliveries WHERE message_id = $1 AND endpoint_id = $2',
      [messageIds[0], otherEndpointId],
    );
    const steps = new EngineSteps(h.services);
    const failure: AttemptResult = { kind: 'response', status: 500, retryAfterSeconds: null };
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      if (attempt > 1) expect((await post(h, `/deliveries/${delivery.id}/retry_now`, {})).status).toBe(202);
      const [claimed] = await steps.claim([delivery.id]);
      expect(claimed, `attempt ${attempt} claimed`).toBeDefined();
      await steps.settle([{ attempt: claimed!, result: failure, durationMs: 3, responseBody: null, jitter: 0 }]);
    }
    const attempts = await all(`/deliveries/${delivery.id}/attempts`);
    expect(attempts).toHaveLength(3);
    expect(await walk(`/deliveries/${delivery.id}/attempts`)).toEqual(attempts);
  });

  it('GET /replays', async () => {
    for (let n = 0; n < 3; n += 1) {
      const replay = await post(h, '/replays', { endpoint_id: endpointId });
      expect(replay.status, replay.text).toBe(202);
    }
    const replays = await all('/replays');
    expect(replays).toHaveLength(3);
    expect(await walk('/replays')).toEqual(replays);
    expect(await walk(`/replays?endpoint_id=${endpointId}`)).toEqual(replays);
  });

  it('GET /events (the operational event feed)', async () => {
    // A rejected capture emits webhooks.source.rejected (coalesced per source and minute): three sources, three events.
    for (let n = 0; n < 3; n += 1) {
      const source = await post(h, '/sources', {
        tenant_id: tenantId,
        name: `rejecting ${n}`,
        event_type: 'paging.event',
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
    // The feed lists an event once every transaction older than it has ended, in the whole cluster (its snapshot's
    // xmin): other test files' transactions on the shared Postgres can hold it back for a moment.
    const deadline = Date.now() + 15_000;
    let events = await all('/events?type=webhooks.source.rejected');
    while (events.length < 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      events = await all('/events?type=webhooks.source.rejected');
    }
    expect(events).toHaveLength(3);
    expect(await walk('/events?type=webhooks.source.rejected')).toEqual(events);
  });

  it('platform events and event subscription deliveries', async () => {
    const environment = await post(h, '/platform/feature_flags/environments', { name: 'paging' });
    expect(environment.status, environment.text).toBe(201);
    const subscription = await post(h, '/platform/event_subscriptions', {
      url: 'https://receiver.example.com/subscription',
      events: ['feature_flags.*'],
      environment_ids: [environment.json.id],
    });
    expect(subscription.status, subscription.text).toBe(201);
    for (const key of ['p1', 'p2', 'p3']) {
      const flag = await h.request('PUT', `/platform/feature_flags/environments/${environment.json.id}/flags/${key}`, {
        idempotencyKey: uniqueKey(),
        body: { enabled: true },
      });
      expect(flag.status, flag.text).toBe(201);
    }
    const deliveriesPath = `/platform/event_subscriptions/${subscription.json.id}/deliveries`;
    const deliveries = await all(deliveriesPath);
    expect(deliveries).toHaveLength(3);
    expect(await walk(deliveriesPath)).toEqual(deliveries);
    const events = await all('/platform/events');
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(await walk('/platform/events')).toEqual(events);
  });

  it('still refuses a cursor with other filters, or with the window it defaulted now written out', async () => {
    const first = await h.request('GET', `/messages?tenant_id=${tenantId}&limit=2`);
    const cursor = first.json.next_cursor as string;
    await sleep(PAUSE_MS);
    for (const query of [
      `event_type=paging.event`,
      `tenant_id=${tenantId}&event_type=paging.event`,
      `tenant_id=${tenantId}&created_before=${new Date().toISOString()}`,
    ]) {
      const refused = await h.request('GET', `/messages?${query}&limit=2&cursor=${cursor}`);
      expect(refused.status, query).toBe(422);
      expect(refused.json.error.code).toBe('invalid_cursor');
    }
    const deliveries = await h.request('GET', `/deliveries?endpoint_id=${endpointId}&limit=2`);
    const refused = await h.request(
      'GET',
      `/deliveries?endpoint_id=${otherEndpointId}&limit=2&cursor=${deliveries.json.next_cursor}`,
    );
    expect(refused.json.error.code).toBe('invalid_cursor');
    // A cursor of one list is not a cursor of another.
    const crossed = await h.request('GET', `/deliveries?limit=2&cursor=${cursor}`);
    expect(crossed.json.error.code).toBe('invalid_cursor');
    // The window it carries is covered by its digest: widened by hand, it is no cursor of this list.
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    decoded.w[0] -= 86_400_000;
    const widened = Buffer.from(JSON.stringify(decoded)).toString('base64url');
    const forged = await h.request('GET', `/messages?tenant_id=${tenantId}&limit=2&cursor=${widened}`);
    expect(forged.json.error.code).toBe('invalid_cursor');
  });
});
