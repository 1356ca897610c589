import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

/**
 * Bulk replays through GraphQL over the real server. Dead letters are made with the engine's claim and settle (no
 * worker), and a replay's batches and completion check run when the test calls them, so every count is exact.
 */
let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
  await post(h, '/event_types', { name: 'order.created' });
  await post(h, '/event_types', { name: 'order.shipped' });
});
afterAll(async () => {
  await h.close();
});

/** The harness clock stands still: everything happens at this instant. */
const NOW = '2026-11-02T10:00:00.000Z';
/** The default window ends just after now (created_before is exclusive) and starts 30 days before that. */
const DEFAULT_BEFORE = '2026-11-02T10:00:00.001Z';
const DEFAULT_AFTER = '2026-10-03T10:00:00.001Z';

const REPLAY_FIELDS = `id endpointId tenantId createdAfter createdBefore eventType maxCostUsd payingKeyId status reason
  counts { matched created skipped succeeded failed pending } costUsd estimate { deliveries skipped costUsd }
  createdAt updatedAt finishedAt`;
const ESTIMATE = `query($endpointId: ID!, $createdAfter: DateTimeISO, $createdBefore: DateTimeISO, $eventType: String,
  $maxCostUsd: String) {
  replayEstimate(endpointId: $endpointId, createdAfter: $createdAfter, createdBefore: $createdBefore,
    eventType: $eventType, maxCostUsd: $maxCostUsd) {
    endpointId createdAfter createdBefore eventType maxCostUsd matched estimate { deliveries skipped costUsd }
    withinMaxCost { deliveries costUsd }
  }
}`;
const START = `mutation($input: StartReplayInput!, $key: String) {
  startReplay(input: $input, idempotencyKey: $key) { ${REPLAY_FIELDS} }
}`;
const CANCEL = `mutation($id: ID!, $key: String) { cancelReplay(id: $id, idempotencyKey: $key) { ${REPLAY_FIELDS} } }`;
const REPLAY = `query($id: ID!) { replay(id: $id) { ${REPLAY_FIELDS} } }`;
const REPLAYS = `query($endpointId: ID, $first: Int, $after: String) {
  replays(endpointId: $endpointId, first: $first, after: $after) { nodes { id endpointId status } nextCursor }
}`;
const ENDPOINT_REPLAYS = `query($id: ID!) {
  endpoint(id: $id) { id status replays { nodes { id status counts { created succeeded failed } } nextCursor } }
}`;
const REPLAY_DELIVERIES = `query($endpointId: ID!) {
  deliveries(endpointId: $endpointId, kind: replay) { nodes { id status generation replayOf replayId } }
}`;

const answer = (status: number): AttemptResult => ({ kind: 'response', status, retryAfterSeconds: null });

/** One attempt the way the worker makes it: the engine's claim, then its settlement of the given answer. */
async function attempt(deliveryId: string, result: AttemptResult): Promise<void> {
  const [claimed] = await new EngineSteps(h.services).claim([deliveryId]);
  expect(claimed?.deliveryId).toBe(deliveryId);
  await new EngineSteps(h.services).settle([
    { attempt: claimed!, result, durationMs: 9, responseBody: null, jitter: 0 },
  ]);
}

/** A tenant with an endpoint of its own (so no test's failures open another test's circuit). */
async function tenantWithEndpoint(name: string, harness = h): Promise<{ tenantId: string; endpointId: string }> {
  const tenantId = (await post(harness, '/tenants', { external_id: name, name })).json.id as string;
  const endpoint = await post(harness, '/endpoints', {
    tenant_id: tenantId,
    url: `https://receiver.example.com/${name}`,
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  return { tenantId, endpointId: endpoint.json.id as string };
}

/** Publishes a message to the tenant and answers it with `status`; returns the message and its delivery. */
async function delivered(
  tenantId: string,
  status: number,
  eventType = 'order.created',
): Promise<{ messageId: string; deliveryId: string }> {
  const message = await post(h, '/messages', { tenant_id: tenantId, event_type: eventType, payload: { status } });
  expect(message.status, message.text).toBe(202);
  const [row]: { id: string }[] = await h.services.db.query('SELECT id FROM deliveries WHERE message_id = $1', [
    message.json.id,
  ]);
  await attempt(row!.id, answer(status));
  return { messageId: message.json.id as string, deliveryId: row!.id };
}

async function deadLetters(tenantId: string, count: number): Promise<{ messageId: string; deliveryId: string }[]> {
  const made = [];
  for (let i = 0; i < count; i += 1) made.push(await delivered(tenantId, 400));
  return made;
}

async function chargeCount(): Promise<number> {
  const [row]: { n: number }[] = await h.services.db.query(
    'SELECT count(*)::int AS n FROM charges WHERE team_id = $1',
    [h.team.teamId],
  );
  return row!.n;
}

describe('GraphQL replayEstimate', () => {
  it("prices the endpoint's dead letters of a window, bounded by maxCostUsd; nothing is stored or charged", async () => {
    const { tenantId, endpointId } = await tenantWithEndpoint('gql-replay-estimate');
    const created = await deadLetters(tenantId, 3);
    await delivered(tenantId, 400, 'order.shipped');
    await delivered(tenantId, 200);
    const charges = await chargeCount();

    const all = await gql(ESTIMATE, { endpointId });
    expect(all.body.errors).toBeUndefined();
    expect(all.body.data.replayEstimate).toEqual({
      endpointId,
      createdAfter: DEFAULT_AFTER,
      createdBefore: DEFAULT_BEFORE,
      eventType: null,
      maxCostUsd: null,
      matched: 4,
      estimate: { deliveries: 4, skipped: 0, costUsd: '0.0002' },
      withinMaxCost: { deliveries: 4, costUsd: '0.0002' },
    });

    const bounded = await gql(ESTIMATE, { endpointId, eventType: 'order.created', maxCostUsd: '0.0001' });
    expect(bounded.body.data.replayEstimate).toMatchObject({
      eventType: 'order.created',
      maxCostUsd: '0.0001',
      matched: 3,
      estimate: { deliveries: 3, skipped: 0, costUsd: '0.00015' },
      withinMaxCost: { deliveries: 2, costUsd: '0.0001' },
    });

    // A redacted dead letter is matched but skipped: its content is gone.
    await post(h, `/messages/${created[0]!.messageId}/redact`, {});
    const redacted = await gql(ESTIMATE, { endpointId, eventType: 'order.created' });
    expect(redacted.body.data.replayEstimate).toMatchObject({
      matched: 3,
      estimate: { deliveries: 2, skipped: 1, costUsd: '0.0001' },
      withinMaxCost: { deliveries: 2, costUsd: '0.0001' },
    });
    // The window is [createdAfter, createdBefore): ending at their creation it holds none of them.
    const before = await gql(ESTIMATE, { endpointId, createdAfter: '2026-11-01T10:00:00.000Z', createdBefore: NOW });
    expect(before.body.data.replayEstimate).toMatchObject({
      createdAfter: '2026-11-01T10:00:00.000Z',
      createdBefore: NOW,
      matched: 0,
      estimate: { deliveries: 0, skipped: 0, costUsd: '0' },
    });

    expect((await gql(REPLAYS, { endpointId })).body.data.replays).toEqual({ nodes: [], nextCursor: null });
    expect(await chargeCount()).toBe(charges);

    const badCost = await gql(ESTIMATE, { endpointId, maxCostUsd: '1.50 USD' });
    expect(badCost.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'max_cost_usd' });
    const longWindow = await gql(ESTIMATE, { endpointId, createdAfter: '2026-09-01T00:00:00.000Z' });
    expect(longWindow.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'created_after' });
    const unknown = await gql(ESTIMATE, { endpointId: 'wde_missing' });
    expect(unknown.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'endpoint_id' });
    expect(unknown.body.data).toBeNull();
  });
});

describe('GraphQL startReplay, progress and cancelReplay', () => {
  it('starts a replay once per idempotency key; its batch and completion show in the progress fields', async () => {
    const { tenantId, endpointId } = await tenantWithEndpoint('gql-replay-start');
    const dead = await deadLetters(tenantId, 2);
    const charges = await chargeCount();

    const key = uniqueKey();
    const started = await gql(START, { input: { endpointId }, key });
    expect(started.body.errors).toBeUndefined();
    const replay = started.body.data.startReplay;
    expect(replay.id).toMatch(/^wdr_/);
    expect(replay).toEqual({
      id: replay.id,
      endpointId,
      tenantId,
      createdAfter: DEFAULT_AFTER,
      createdBefore: DEFAULT_BEFORE,
      eventType: null,
      maxCostUsd: null,
      payingKeyId: h.team.keyId,
      status: 'running',
      reason: null,
      counts: { matched: 2, created: 0, skipped: 0, succeeded: 0, failed: 0, pending: 0 },
      costUsd: '0',
      estimate: { deliveries: 2, skipped: 0, costUsd: '0.0001' },
      createdAt: NOW,
      updatedAt: NOW,
      finishedAt: null,
    });
    // The same key and input: the first answer, and still one replay.
    const again = await gql(START, { input: { endpointId }, key });
    expect(again.body.data.startReplay).toEqual(replay);
    expect((await gql(REPLAYS, { endpointId })).body.data.replays).toEqual({
      nodes: [{ id: replay.id, endpointId, status: 'running' }],
      nextCursor: null,
    });
    const conflict = await gql(START, { input: { endpointId, maxCostUsd: '1' }, key });
    expect(conflict.body.errors[0].extensions.code).toBe('idempotency_conflict');
    expect(await chargeCount()).toBe(charges);

    // One batch creates both generations and charges them; they are pending until attempted.
    await h.services.replays.runBatch(replay.id);
    const delivering = await gql(REPLAY, { id: replay.id });
    expect(delivering.body.data.replay).toMatchObject({
      status: 'delivering',
      reason: null,
      counts: { matched: 2, created: 2, skipped: 0, succeeded: 0, failed: 0, pending: 2 },
      costUsd: '0.0001',
      finishedAt: null,
    });
    expect(await chargeCount()).toBe(charges + 2);
    const byReplayOf = (a: { replayOf: string }, b: { replayOf: string }) => a.replayOf.localeCompare(b.replayOf);
    const generations = (await gql(REPLAY_DELIVERIES, { endpointId })).body.data.deliveries.nodes;
    expect([...generations].sort(byReplayOf)).toEqual(
      dead
        .map((d) => ({
          id: expect.any(String),
          status: 'queued',
          generation: 1,
          replayOf: d.deliveryId,
          replayId: replay.id,
        }))
        .sort(byReplayOf),
    );

    await attempt(generations[0].id, answer(200));
    await attempt(generations[1].id, answer(400));
    await h.services.replays.checkCompletion(replay.id);
    const completed = await gql(REPLAY, { id: replay.id });
    expect(completed.body.data.replay).toEqual({
      ...replay,
      status: 'completed',
      counts: { matched: 2, created: 2, skipped: 0, succeeded: 1, failed: 1, pending: 0 },
      costUsd: '0.0001',
      finishedAt: NOW,
    });
    const endpoint = await gql(ENDPOINT_REPLAYS, { id: endpointId });
    expect(endpoint.body.errors).toBeUndefined();
    expect(endpoint.body.data.endpoint.replays).toEqual({
      nodes: [{ id: replay.id, status: 'completed', counts: { created: 2, succeeded: 1, failed: 1 } }],
      nextCursor: null,
    });
    // A finished replay is no longer creating anything to cancel.
    const late = await gql(CANCEL, { id: replay.id });
    expect(late.body.errors[0].extensions.code).toBe('invalid_state');
    const missing = await gql(REPLAY, { id: 'wdr_missing' });
    expect(missing.body.errors[0].extensions.code).toBe('not_found');
  });

  it('cancelReplay stops a running replay before its batch creates anything; repeating changes nothing', async () => {
    const { tenantId, endpointId } = await tenantWithEndpoint('gql-replay-cancel');
    await deadLetters(tenantId, 2);
    const replay = (await gql(START, { input: { endpointId, eventType: 'order.created', maxCostUsd: '0.5' } })).body
      .data.startReplay;
    expect(replay).toMatchObject({ status: 'running', eventType: 'order.created', maxCostUsd: '0.5' });

    const key = uniqueKey();
    const canceled = await gql(CANCEL, { id: replay.id, key });
    expect(canceled.body.errors).toBeUndefined();
    const expected = {
      ...replay,
      status: 'canceled',
      reason: 'canceled',
      finishedAt: NOW,
    };
    expect(canceled.body.data.cancelReplay).toEqual(expected);
    expect((await gql(CANCEL, { id: replay.id, key })).body.data.cancelReplay).toEqual(expected);
    expect((await gql(CANCEL, { id: replay.id })).body.data.cancelReplay).toEqual(expected);
    // Another replay (an ID of the right shape: a malformed one is refused before the key is looked at).
    const otherId = await gql(CANCEL, { id: `wdr_${'0'.repeat(26)}`, key });
    expect(otherId.body.errors[0].extensions.code).toBe('idempotency_conflict');

    // The batch job, if it still runs, finds the replay canceled and creates nothing.
    await h.services.replays.runBatch(replay.id);
    expect((await gql(REPLAY, { id: replay.id })).body.data.replay).toEqual(expected);
    expect((await gql(REPLAY_DELIVERIES, { endpointId })).body.data.deliveries.nodes).toEqual([]);
    const missing = await gql(CANCEL, { id: 'wdr_missing' });
    expect(missing.body.errors[0].extensions.code).toBe('not_found');
  });
});

describe('GraphQL replay refusals', () => {
  it('a disabled endpoint gives invalid_state for the estimate and the replay', async () => {
    const { tenantId, endpointId } = await tenantWithEndpoint('gql-replay-disabled');
    await deadLetters(tenantId, 1);
    // 410 Gone: the service disables the endpoint.
    await delivered(tenantId, 410);
    const endpoint = await gql(ENDPOINT_REPLAYS, { id: endpointId });
    expect(endpoint.body.data.endpoint).toEqual({
      id: endpointId,
      status: 'disabled',
      replays: { nodes: [], nextCursor: null },
    });

    const estimate = await gql(ESTIMATE, { endpointId });
    expect(estimate.body.errors[0]).toMatchObject({
      message: 'the endpoint is disabled; resume it first',
      extensions: { code: 'invalid_state' },
    });
    const started = await gql(START, { input: { endpointId }, key: uniqueKey() });
    expect(started.body.errors[0].extensions.code).toBe('invalid_state');
    expect(started.body.data).toBeNull();
    expect((await gql(REPLAYS, { endpointId })).body.data.replays.nodes).toEqual([]);
  });

  it('billing_required without a payment card, and nothing is stored', async () => {
    const { tenantId, endpointId } = await tenantWithEndpoint('gql-replay-card');
    await deadLetters(tenantId, 1);
    await h.services.teams.setPaymentCard(h.team.teamId, false);
    try {
      const refused = await gql(START, { input: { endpointId } });
      expect(refused.body.errors[0].extensions.code).toBe('billing_required');
      // The estimate needs no card: nothing is charged.
      const estimate = await gql(ESTIMATE, { endpointId });
      expect(estimate.body.data.replayEstimate.matched).toBe(1);
    } finally {
      await h.services.teams.setPaymentCard(h.team.teamId, true);
    }
    expect((await gql(REPLAYS, { endpointId })).body.data.replays.nodes).toEqual([]);
  });
});

describe('GraphQL replays at the active-replay limit', () => {
  let limited: Harness;
  beforeAll(async () => {
    limited = await startHarness({ limits: { max_active_replays: 1 } });
  });
  afterAll(async () => {
    await limited.close();
  });

  it('quota_exceeded while the one allowed replay runs; accepted again once it is canceled', async () => {
    const limitedGql = graphqlClient(limited);
    const { endpointId } = await tenantWithEndpoint('gql-replay-quota', limited);
    const first = await limitedGql(START, { input: { endpointId } });
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.startReplay).toMatchObject({ status: 'running', counts: { matched: 0 } });

    const refused = await limitedGql(START, { input: { endpointId } });
    expect(refused.body.errors[0]).toMatchObject({
      message: 'at most 1 replays of a team run at once; wait for one to finish or cancel one',
      extensions: { code: 'quota_exceeded' },
    });
    expect((await limitedGql(REPLAYS, {})).body.data.replays.nodes).toHaveLength(1);

    await limitedGql(CANCEL, { id: first.body.data.startReplay.id });
    const second = await limitedGql(START, { input: { endpointId } });
    expect(second.body.errors).toBeUndefined();
    expect(second.body.data.startReplay.status).toBe('running');
    const listed = (await limitedGql(REPLAYS, { first: 1 })).body.data.replays;
    expect(listed.nodes).toEqual([{ id: first.body.data.startReplay.id, endpointId, status: 'canceled' }]);
    const next = await limitedGql(REPLAYS, { first: 1, after: listed.nextCursor });
    expect(next.body.data.replays).toEqual({
      nodes: [{ id: second.body.data.startReplay.id, endpointId, status: 'running' }],
      nextCursor: null,
    });
  });
});
