import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';
import { ADMISSION_FIELDS } from './guard.plugin.js';
import { graphqlClient } from './test-client.js';

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

/** The harness clock stands still here; lists end before it by default (created_before is exclusive). */
const NOW = '2026-11-02T10:00:00.000Z';
const AFTER_NOW = '2026-11-02T10:00:01.000Z';

const DELIVERY_FIELDS = `id messageId endpointId tenantId eventType generation kind replayOf replayId status
  attemptCount nextAttemptAt lastStatusCode lastError lastAttemptAt expiresAt bodyBytes contentType transformed
  price { deliveryUnits totalUsd } createdAt updatedAt finishedAt`;
const ATTEMPT_FIELDS = `id deliveryId endpointId number trigger startedAt durationMs urlRevision statusCode errorKind
  outcome responseBody responseBodyEncoding createdAt`;

const MESSAGES = `query($tenantId: ID, $eventType: String, $externalId: String, $status: MessageStatus, $first: Int,
  $after: String, $createdBefore: DateTimeISO) {
  messages(tenantId: $tenantId, eventType: $eventType, externalId: $externalId, status: $status, first: $first,
    after: $after, createdBefore: $createdBefore) { nodes { id tenantId eventType externalId status } nextCursor }
}`;
const MESSAGE_DELIVERIES = `query($id: ID!) {
  message(id: $id) { id status redacted contentAvailable bodySha256 deliveries { nodes { ${DELIVERY_FIELDS} } nextCursor } }
}`;
const CONTENT = `query($id: ID!) { messageContent(id: $id) { contentType bytes bodyBase64 text } }`;
const CANCEL = `mutation($id: ID!, $key: String) {
  cancelMessage(id: $id, idempotencyKey: $key) { messageId canceledCount inFlightCount alreadyTerminalCount }
}`;
const REDACT = `mutation($id: ID!, $key: String) {
  redactMessage(id: $id, idempotencyKey: $key) { messageId status redactedAt }
}`;
const DELIVERY = `query($id: ID!) {
  delivery(id: $id) { ${DELIVERY_FIELDS} attempts { nodes { ${ATTEMPT_FIELDS} } nextCursor } }
}`;
const DELIVERIES = `query($messageId: ID, $endpointId: ID, $status: DeliveryStatus, $kind: DeliveryKind,
  $createdBefore: DateTimeISO) {
  deliveries(messageId: $messageId, endpointId: $endpointId, status: $status, kind: $kind,
    createdBefore: $createdBefore) { nodes { id status generation kind } nextCursor }
}`;
const RETRY_NOW = `mutation($id: ID!, $key: String) { retryDeliveryNow(id: $id, idempotencyKey: $key) { ${DELIVERY_FIELDS} } }`;
const REPLAY = `mutation($id: ID!, $configuration: ReplayConfiguration, $key: String) {
  replayDelivery(id: $id, configuration: $configuration, idempotencyKey: $key) { ${DELIVERY_FIELDS} }
}`;
const QUOTE = `query($ids: [ID!]!, $configuration: ReplayConfiguration) {
  replayQuote(deliveryIds: $ids, configuration: $configuration) {
    items { deliveryId replayable errorCode reason deliveryUnits totalUsd } deliveryUnits totalUsd
  }
}`;
const EVENTS = `query($type: String, $resourceId: String, $tenantId: ID, $first: Int) {
  events(type: $type, resourceId: $resourceId, tenantId: $tenantId, first: $first) {
    nodes { id type createdAt resourceId tenantId resourceVersion data coalesced count firstId lastId } nextCursor
  }
}`;

/** A tenant with one endpoint of its own (so one test's failures never open another test's circuit). */
async function tenantWithEndpoint(name: string): Promise<{ tenantId: string; endpointId: string }> {
  const tenantId = (await post(h, '/tenants', { external_id: name, name })).json.id as string;
  const endpoint = await post(h, '/endpoints', { tenant_id: tenantId, url: `https://receiver.example.com/${name}` });
  expect(endpoint.status, endpoint.text).toBe(201);
  return { tenantId, endpointId: endpoint.json.id as string };
}

async function publish(tenantId: string, body: Record<string, unknown> = {}): Promise<string> {
  const published = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', ...body });
  expect(published.status, published.text).toBe(202);
  return published.json.id as string;
}

/** The message's deliveries, read through the Message.deliveries field. */
async function deliveriesOf(messageId: string): Promise<Record<string, unknown>[]> {
  const read = await gql(MESSAGE_DELIVERIES, { id: messageId });
  expect(read.body.errors).toBeUndefined();
  return read.body.data.message.deliveries.nodes;
}

async function onlyDeliveryOf(messageId: string): Promise<string> {
  const [delivery, ...others] = await deliveriesOf(messageId);
  expect(others).toEqual([]);
  return delivery!['id'] as string;
}

/** One attempt the way the worker makes it: the engine's claim, then its settlement of the given answer. */
async function attempt(deliveryId: string, result: AttemptResult, responseBody: string | null = null): Promise<void> {
  const [claimed] = await new EngineSteps(h.services).claim([deliveryId]);
  expect(claimed?.deliveryId).toBe(deliveryId);
  await new EngineSteps(h.services).settle([
    {
      attempt: claimed!,
      result,
      durationMs: 12,
      responseBody: responseBody ? Buffer.from(responseBody) : null,
      jitter: 0,
    },
  ]);
}

const answer = (status: number): AttemptResult => ({ kind: 'response', status, retryAfterSeconds: null });

describe('GraphQL messages list, content, cancel and redact', () => {
  it('lists messages with filters and pages through them with first and after', async () => {
    const { tenantId } = await tenantWithEndpoint('gql-inspect-list');
    const ids = [
      await publish(tenantId, { payload: { n: 1 }, external_id: 'order-1' }),
      await publish(tenantId, { payload: { n: 2 }, external_id: 'order-2' }),
      await publish(tenantId, { payload: { n: 3 }, external_id: 'order-3' }),
    ];
    await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.shipped', payload: {} });

    const first = await gql(MESSAGES, { tenantId, eventType: 'order.created', first: 2, createdBefore: AFTER_NOW });
    expect(first.body.errors).toBeUndefined();
    const firstPage = first.body.data.messages;
    expect(firstPage.nodes).toHaveLength(2);
    expect(firstPage.nextCursor).toEqual(expect.any(String));
    const second = await gql(MESSAGES, {
      tenantId,
      eventType: 'order.created',
      first: 2,
      after: firstPage.nextCursor,
      createdBefore: AFTER_NOW,
    });
    const secondPage = second.body.data.messages;
    expect(secondPage.nodes).toHaveLength(1);
    expect(secondPage.nextCursor).toBeNull();
    const listed = [...firstPage.nodes, ...secondPage.nodes];
    expect(listed.map((m: { id: string }) => m.id).sort()).toEqual([...ids].sort());
    for (const message of listed)
      expect(message).toMatchObject({ tenantId, eventType: 'order.created', status: 'queued' });

    const byExternalId = await gql(MESSAGES, { tenantId, externalId: 'order-2', createdBefore: AFTER_NOW });
    expect(byExternalId.body.data.messages.nodes).toEqual([
      { id: ids[1], tenantId, eventType: 'order.created', externalId: 'order-2', status: 'queued' },
    ]);
    // created_before is exclusive: the clock has not moved since they were published.
    const beforeThem = await gql(MESSAGES, { tenantId, createdBefore: NOW });
    expect(beforeThem.body.data.messages).toEqual({ nodes: [], nextCursor: null });
    // The status is an enum of the schema: GraphQL refuses another value before the resolver runs.
    const badStatus = await gql(MESSAGES, { tenantId, status: 'sleeping' });
    expect(badStatus.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(badStatus.body.errors[0].message).toContain('MessageStatus');
  });

  it('reads the exact content as text and base64; after redactMessage it is payload_expired', async () => {
    const { tenantId } = await tenantWithEndpoint('gql-inspect-content');
    const json = await publish(tenantId, { payload: { city: 'Zürich', n: 1 } });
    const text = '{"city":"Zürich","n":1}';
    const before = await gql(MESSAGE_DELIVERIES, { id: json });
    expect(before.body.data.message.bodySha256).toBe(createHash('sha256').update(text).digest('hex'));
    const read = await gql(CONTENT, { id: json });
    expect(read.body.data.messageContent).toEqual({
      contentType: 'application/json',
      bytes: Buffer.byteLength(text),
      bodyBase64: Buffer.from(text).toString('base64'),
      text,
    });
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
    const raw = await publish(tenantId, {
      body_base64: binary.toString('base64'),
      content_type: 'application/octet-stream',
    });
    const rawRead = await gql(CONTENT, { id: raw });
    expect(rawRead.body.data.messageContent).toEqual({
      contentType: 'application/octet-stream',
      bytes: 4,
      bodyBase64: binary.toString('base64'),
      text: null,
    });

    const redacted = await gql(REDACT, { id: json, key: uniqueKey() });
    expect(redacted.body.errors).toBeUndefined();
    expect(redacted.body.data.redactMessage).toEqual({ messageId: json, status: 'redacting', redactedAt: NOW });
    const gone = await gql(CONTENT, { id: json });
    expect(gone.body.errors[0].extensions.code).toBe('payload_expired');
    expect(gone.body.data).toBeNull();
    const message = await gql(MESSAGE_DELIVERIES, { id: json });
    // The body's hash is erased with it: for a guessable body it would confirm a guess.
    expect(message.body.data.message).toMatchObject({
      redacted: true,
      contentAvailable: false,
      status: 'canceled',
      bodySha256: null,
    });
    expect(message.body.data.message.deliveries.nodes).toMatchObject([
      { status: 'canceled', lastError: 'message_redacted', finishedAt: NOW },
    ]);
    // Repeating changes nothing; the other message keeps its content.
    const again = await gql(REDACT, { id: json });
    expect(again.body.data.redactMessage).toEqual({ messageId: json, status: 'redacting', redactedAt: NOW });
    expect((await gql(CONTENT, { id: raw })).body.data.messageContent.bytes).toBe(4);
    const missing = await gql(REDACT, { id: 'wdm_missing' });
    expect(missing.body.errors[0].extensions.code).toBe('not_found');
  });

  it('cancelMessage cancels a scheduled message; its idempotencyKey replays the first answer', async () => {
    const { tenantId } = await tenantWithEndpoint('gql-inspect-cancel');
    await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/cancel-2' });
    const id = await publish(tenantId, { payload: { n: 1 }, deliver_at: '2026-11-03T10:00:00.000Z' });
    const before = await deliveriesOf(id);
    expect(before.map((d) => d['status'])).toEqual(['scheduled', 'scheduled']);
    expect(before[0]).toMatchObject({ nextAttemptAt: '2026-11-03T10:00:00.000Z', attemptCount: 0, kind: 'original' });

    const key = uniqueKey();
    const canceled = await gql(CANCEL, { id, key });
    expect(canceled.body.errors).toBeUndefined();
    const firstAnswer = { messageId: id, canceledCount: 2, inFlightCount: 0, alreadyTerminalCount: 0 };
    expect(canceled.body.data.cancelMessage).toEqual(firstAnswer);
    const replayed = await gql(CANCEL, { id, key });
    expect(replayed.body.data.cancelMessage).toEqual(firstAnswer);
    // Without the key it runs again and finds nothing left to cancel.
    const rerun = await gql(CANCEL, { id });
    expect(rerun.body.data.cancelMessage).toEqual({ ...firstAnswer, canceledCount: 0, alreadyTerminalCount: 2 });
    const after = await deliveriesOf(id);
    expect(after.map((d) => [d['status'], d['lastError'], d['nextAttemptAt']])).toEqual([
      ['canceled', 'message_canceled', null],
      ['canceled', 'message_canceled', null],
    ]);
    expect((await gql(MESSAGE_DELIVERIES, { id })).body.data.message.status).toBe('canceled');
    // Another message (an ID of the right shape: a malformed one is refused before the key is looked at).
    const other = await gql(CANCEL, { id: `wdm_${'0'.repeat(26)}`, key });
    expect(other.body.errors[0].extensions.code).toBe('idempotency_conflict');
  });
});

describe('GraphQL deliveries, attempts, retry now and replay', () => {
  let tenantId: string;
  let endpointId: string;
  beforeAll(async () => {
    ({ tenantId, endpointId } = await tenantWithEndpoint('gql-inspect-engine'));
    const settings = await gql('{ settings { etag } }');
    const logging = await gql(
      'mutation($etag: String!) { updateSettings(etag: $etag, input: {responseBodyLogging: true}) { responseBodyLogging } }',
      { etag: settings.body.data.settings.etag },
    );
    expect(logging.body.data.updateSettings.responseBodyLogging).toBe(true);
  });

  it('a delivered message shows its delivery with the attempt and the response body', async () => {
    const messageId = await publish(tenantId, { payload: { n: 1 } });
    const deliveryId = await onlyDeliveryOf(messageId);
    await attempt(deliveryId, answer(200), 'thanks');

    const read = await gql(DELIVERY, { id: deliveryId });
    expect(read.body.errors).toBeUndefined();
    const { attempts, ...delivery } = read.body.data.delivery;
    expect(delivery).toEqual({
      id: deliveryId,
      messageId,
      endpointId,
      tenantId,
      eventType: 'order.created',
      generation: 0,
      kind: 'original',
      replayOf: null,
      replayId: null,
      status: 'succeeded',
      attemptCount: 1,
      nextAttemptAt: null,
      lastStatusCode: 200,
      lastError: null,
      lastAttemptAt: NOW,
      expiresAt: '2026-11-05T10:00:00.000Z',
      bodyBytes: '{"n":1}'.length,
      contentType: 'application/json',
      transformed: false,
      price: { deliveryUnits: 1, totalUsd: expect.stringMatching(/^0\.0000\d+$/) },
      createdAt: NOW,
      updatedAt: NOW,
      finishedAt: NOW,
    });
    expect(attempts).toEqual({
      nodes: [
        {
          id: expect.stringMatching(/^[a-z]+_/),
          deliveryId,
          endpointId,
          number: 1,
          trigger: 'scheduled',
          startedAt: NOW,
          durationMs: 12,
          urlRevision: expect.any(Number),
          statusCode: 200,
          errorKind: null,
          outcome: 'succeeded',
          responseBody: 'thanks',
          responseBodyEncoding: 'utf8',
          createdAt: NOW,
        },
      ],
      nextCursor: null,
    });
    // The same delivery in the list, by endpoint and status; and in the message's deliveries.
    const listed = await gql(DELIVERIES, { endpointId, status: 'succeeded', createdBefore: AFTER_NOW });
    expect(listed.body.data.deliveries).toEqual({
      nodes: [{ id: deliveryId, status: 'succeeded', generation: 0, kind: 'original' }],
      nextCursor: null,
    });
    expect(await deliveriesOf(messageId)).toEqual([delivery]);
    const missing = await gql(DELIVERY, { id: 'wdd_missing' });
    expect(missing.body.errors[0].extensions.code).toBe('not_found');
  });

  it('retryDeliveryNow makes a retry_wait delivery due now; a queued one gives invalid_state', async () => {
    const queued = await onlyDeliveryOf(await publish(tenantId, { payload: { n: 2 } }));
    const refused = await gql(RETRY_NOW, { id: queued });
    expect(refused.body.errors[0].extensions.code).toBe('invalid_state');
    expect(refused.body.data).toBeNull();

    await attempt(queued, answer(503));
    const waiting = await gql(DELIVERY, { id: queued });
    expect(waiting.body.data.delivery).toMatchObject({ status: 'retry_wait', attemptCount: 1, lastStatusCode: 503 });
    expect(waiting.body.data.delivery.nextAttemptAt > NOW).toBe(true);

    const retried = await gql(RETRY_NOW, { id: queued, key: uniqueKey() });
    expect(retried.body.errors).toBeUndefined();
    expect(retried.body.data.retryDeliveryNow).toMatchObject({
      id: queued,
      status: 'retry_wait',
      attemptCount: 1,
      nextAttemptAt: NOW,
      lastError: 'http_503',
    });
    // The next attempt is the retry_now one, numbered after the first.
    await attempt(queued, answer(200));
    const done = await gql(DELIVERY, { id: queued });
    expect(done.body.data.delivery.status).toBe('succeeded');
    expect(
      done.body.data.delivery.attempts.nodes.map((a: { number: number; trigger: string; outcome: string }) => [
        a.number,
        a.trigger,
        a.outcome,
      ]),
    ).toEqual([
      [1, 'scheduled', 'failed'],
      [2, 'retry_now', 'succeeded'],
    ]);
  });

  it('replayQuote prices a selection; replayDelivery makes a new paid generation, and not of a pending one', async () => {
    const messageId = await publish(tenantId, { payload: { n: 3 } });
    const original = await onlyDeliveryOf(messageId);
    const pending = await onlyDeliveryOf(await publish(tenantId, { payload: { n: 4 } }));
    await attempt(original, answer(200));

    const quote = await gql(QUOTE, { ids: [pending, original, 'wdd_missing'] });
    expect(quote.body.errors).toBeUndefined();
    const { items, deliveryUnits, totalUsd } = quote.body.data.replayQuote;
    expect(items).toEqual([
      {
        deliveryId: pending,
        replayable: false,
        errorCode: 'invalid_state',
        reason: expect.stringContaining('pending'),
        deliveryUnits: 0,
        totalUsd: '0',
      },
      { deliveryId: original, replayable: true, errorCode: null, reason: null, deliveryUnits: 1, totalUsd },
      {
        deliveryId: 'wdd_missing',
        replayable: false,
        errorCode: 'not_found',
        reason: 'no such delivery',
        deliveryUnits: 0,
        totalUsd: '0',
      },
    ]);
    expect(deliveryUnits).toBe(1);
    expect(Number(totalUsd)).toBeGreaterThan(0);
    const badConfiguration = await gql(QUOTE, { ids: [original], configuration: 'someday' });
    expect(badConfiguration.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(badConfiguration.body.errors[0].message).toContain('ReplayConfiguration');

    const refused = await gql(REPLAY, { id: pending });
    expect(refused.body.errors[0].extensions.code).toBe('invalid_state');

    const key = uniqueKey();
    const replay = await gql(REPLAY, { id: original, key });
    expect(replay.body.errors).toBeUndefined();
    const replayed = replay.body.data.replayDelivery;
    expect(replayed).toMatchObject({
      messageId,
      endpointId,
      generation: 1,
      kind: 'replay',
      replayOf: original,
      replayId: null,
      status: 'queued',
      attemptCount: 0,
      price: { deliveryUnits: 1, totalUsd },
    });
    expect(replayed.id).not.toBe(original);
    const again = await gql(REPLAY, { id: original, key });
    expect(again.body.data.replayDelivery).toEqual(replayed);
    expect((await deliveriesOf(messageId)).map((d) => [d['id'], d['generation']])).toEqual([
      [original, 0],
      [replayed.id, 1],
    ]);
    const replays = await gql(DELIVERIES, { messageId, kind: 'replay', createdBefore: AFTER_NOW });
    expect(replays.body.data.deliveries.nodes).toEqual([
      { id: replayed.id, status: 'queued', generation: 1, kind: 'replay' },
    ]);

    // Redaction erases what a replay would send.
    await gql(REDACT, { id: messageId });
    const expiredQuote = await gql(QUOTE, { ids: [original] });
    expect(expiredQuote.body.data.replayQuote.items[0]).toMatchObject({
      replayable: false,
      errorCode: 'payload_expired',
    });
    const expired = await gql(REPLAY, { id: original });
    expect(expired.body.errors[0].extensions.code).toBe('payload_expired');
  });

  it('a failed delivery shows up in the events feed', async () => {
    const messageId = await publish(tenantId, { payload: { n: 5 } });
    const deliveryId = await onlyDeliveryOf(messageId);
    await attempt(deliveryId, answer(400));

    // The feed shows an event once every older transaction has finished: poll through the service (sparing the
    // read bucket), then read it through GraphQL.
    for (let tries = 0; tries < 100; tries += 1) {
      const page = await h.services.events.listEvents(
        { actor: h.team },
        { type: 'webhooks.delivery.failed', resource_id: deliveryId },
      );
      if (page.data.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const events = await gql(EVENTS, { type: 'webhooks.delivery.failed', resourceId: deliveryId, tenantId });
    expect(events.body.errors).toBeUndefined();
    const { nodes, nextCursor } = events.body.data.events;
    expect(nodes).toEqual([
      {
        id: expect.any(String),
        type: 'webhooks.delivery.failed',
        createdAt: NOW,
        resourceId: deliveryId,
        tenantId,
        resourceVersion: expect.any(String),
        data: {
          delivery_id: deliveryId,
          message_id: messageId,
          endpoint_id: endpointId,
          attempts: 1,
          last_status_code: 400,
          reason: expect.any(String),
        },
        coalesced: false,
        count: 1,
        firstId: deliveryId,
        lastId: deliveryId,
      },
    ]);
    // A feed: the cursor is set on every non-empty page.
    expect(nextCursor).toEqual(expect.any(String));
    const all = await gql(EVENTS, { first: 10 });
    expect(Array.isArray(all.body.data.events.nodes)).toBe(true);
    expect(all.body.data.events.nodes.map((e: { resourceId: string }) => e.resourceId)).toContain(deliveryId);
    const badType = await gql(EVENTS, { type: 'webhooks.nothing' });
    expect(badType.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'type' });
  });
});

describe('GraphQL replay rate limits', () => {
  it('replayDelivery spends the admission bucket (burst 200), not the config-write one (burst 40)', async () => {
    const team = await h.newTeam('gql-replay-admission');
    // The harness clock stands still: no bucket refills during the loop.
    for (let i = 0; i < 45; i += 1) {
      const refused = await gql(REPLAY, { id: 'wdd_missing' }, { key: team.key });
      expect(refused.body.errors[0].extensions.code).toBe('not_found');
    }
    const cancel = await gql(CANCEL, { id: 'wdm_missing' }, { key: team.key });
    expect(cancel.body.errors[0].extensions.code).toBe('not_found');
  });
  it('docs/api-choices.md names every mutation that spends the admission bucket', () => {
    const doc = readFileSync(new URL('../../../../docs/api-choices.md', import.meta.url), 'utf8');
    const cost = doc.slice(doc.indexOf('5. **Cost**'), doc.indexOf('Mutations that create or rotate'));
    const named = [...cost.matchAll(/made only of\s[^(]*\(([^)]*)\)/g)].flatMap((m) =>
      [...m[1]!.matchAll(/`(\w+)`/g)].map((n) => n[1]),
    );
    expect(named.sort()).toEqual([...ADMISSION_FIELDS].sort());
  });
});
