import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, HOUR, MINUTE, SECOND } from '@svc/core';
import { verifyAsSpecSays } from '../../../../packages/signing/src/testing/spec-verifier.js';
import { post, type ApiResponse } from '../../../server/src/testing/harness.js';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * The event subscriptions' delivery rules (spec/event-subscriptions.md, "Delivery rules"), end to end: a real
 * server and worker, real Postgres, loopback receivers, and the injectable clock for the retry schedule and the
 * 24-hour block.
 */
interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  event: { id: string; type: string; sequence: number; revision: string | null; data: Record<string, unknown> } | null;
}

type Answer = { status: number; body?: string; headers?: Record<string, string> };

let stack: DeliveryStack;
let receiverBase: string;
let receiver: http.Server;
const hits: Hit[] = [];
/** Per path: how to answer a request (default 200). */
const answers = new Map<string, (hit: Hit) => Answer>();
let environmentId: string;
let otherEnvironmentId: string;

beforeAll(async () => {
  stack = await startDeliveryStack();
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      let event: Hit['event'] = null;
      try {
        event = JSON.parse(body.toString('utf8')) as Hit['event'];
      } catch {
        event = null;
      }
      const hit: Hit = { path: request.url ?? '', headers: request.headers, body, event };
      hits.push(hit);
      const answer = answers.get(hit.path.split('?')[0]!)?.(hit) ?? { status: 200 };
      response.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  environmentId = (await post(stack.h, '/platform/feature_flags/environments', { name: 'production' })).json.id;
  otherEnvironmentId = (await post(stack.h, '/platform/feature_flags/environments', { name: 'staging' })).json.id;
});
afterAll(async () => {
  await stack.close();
  receiver.close();
});

async function subscribe(path: string, extra: Record<string, unknown> = {}) {
  const r = await post(stack.h, '/platform/event_subscriptions', {
    url: `${receiverBase}${path}`,
    events: ['feature_flags.*'],
    environment_ids: [environmentId],
    ...extra,
  });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id as string, secret: r.json.secret as string, etag: r.headers.get('etag')! };
}

let flagCounter = 0;
/** Creates a new flag (one committed change, one event) and returns the event ID. */
async function change(environment = environmentId, key = `flag.${(flagCounter += 1)}`): Promise<string> {
  const r: ApiResponse = await stack.h.request(
    'PUT',
    `/platform/feature_flags/environments/${environment}/flags/${key}`,
    {
      idempotencyKey: `put-${key}-${Date.now()}`,
      body: { enabled: true, value: { rollout: 10 } },
    },
  );
  expect(r.status, r.text).toBe(201);
  const events = await stack.h.request('GET', `/platform/events?environment_id=${environment}&limit=1`);
  return events.json.data[0].id as string;
}

const hitsOf = (path: string) => hits.filter((hit) => hit.path.split('?')[0] === path);

async function waitForHits(path: string, count: number): Promise<Hit[]> {
  return stack.until(`${count} requests at ${path}`, () => (hitsOf(path).length >= count ? hitsOf(path) : undefined));
}

/** Through the service: polling must not drain the read bucket of a clock that stands still. */
async function deliveries(subscriptionId: string) {
  const page = await stack.h.services.subscriptionHistory.listDeliveries({ actor: stack.h.team }, subscriptionId, {
    limit: 200,
  });
  return page.data;
}

async function deliveryOf(subscriptionId: string, eventId: string) {
  return (await deliveries(subscriptionId)).find((d) => d.eventId === eventId && d.trigger === 'event')!;
}

const until = <T>(what: string, probe: () => Promise<T | undefined>) => stack.until(what, probe);

/** What stood still when a wait timed out: the delivery's row, its attempts and its jobs, beside the clocks. */
async function reportStuck(error: unknown, subscriptionId: string, eventId: string): Promise<never> {
  const state = await stack.h.services.db.query(
    `SELECT d.status, d.attempt_count, d.next_attempt_at, d.lease_until, d.ordered,
            (SELECT json_agg(json_build_object('attempt', a.attempt, 'status', a.status_code, 'error', a.error,
                    'ms', a.duration_ms) ORDER BY a.attempt)
               FROM subscription_attempts a WHERE a.delivery_id = d.id) AS attempts,
            (SELECT json_agg(json_build_object('state', j.state, 'start_after', j.start_after,
                    'started_on', j.started_on, 'retry_count', j.retry_count, 'output', j.output))
               FROM pgboss.job j WHERE j.data->>'delivery_id' = d.id) AS jobs, now() AS db_now
       FROM subscription_deliveries d JOIN platform_events e ON e.id = d.event_id
      WHERE d.subscription_id = $1 AND d.event_id = $2`,
    [subscriptionId, eventId],
  );
  throw new Error(`${(error as Error).message}; clock ${stack.h.clock.now().toISOString()}: ${JSON.stringify(state)}`);
}

/**
 * Waits until the delivery's attempt `attempts` is settled (recorded, and its retry scheduled or the delivery done):
 * the receiver sees a request before its settlement commits, and moving the clock in between would move it past a
 * retry that is not queued yet.
 */
async function settled(subscriptionId: string, eventId: string, attempts: number) {
  try {
    return await until(`attempt ${attempts} of ${eventId} to settle`, async () => {
      const d = await deliveryOf(subscriptionId, eventId);
      return d && d.attempts.length >= attempts && (d.status !== 'pending' || d.nextAttemptAt !== null) ? d : undefined;
    });
  } catch (error) {
    return reportStuck(error, subscriptionId, eventId);
  }
}

/** The receiver's `count`th request at `path`, and that attempt settled. */
async function attemptSettled(path: string, count: number, subscriptionId: string, eventId: string) {
  try {
    await waitForHits(path, count);
  } catch (error) {
    await reportStuck(error, subscriptionId, eventId);
  }
  return settled(subscriptionId, eventId, count);
}

const quiet = () => new Promise((resolve) => setTimeout(resolve, 400));

describe('signed delivery', () => {
  it('POSTs the event JSON with Svc-Event-Id and a Svc-Signature a receiver following the spec accepts', async () => {
    const sub = await subscribe('/signed');
    const eventId = await change();
    const [hit] = await waitForHits('/signed', 1);
    expect(hit!.headers['svc-event-id']).toBe(eventId);
    expect(hit!.headers['content-type']).toBe('application/json');
    const signature = hit!.headers['svc-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyAsSpecSays(sub.secret, signature, hit!.body, Math.floor(Date.now() / 1000))).toBe(true);
    expect(
      verifyAsSpecSays(sub.secret, signature, Buffer.concat([hit!.body, Buffer.from(' ')]), Date.now() / 1000),
    ).toBe(false);
    expect(JSON.parse(hit!.body.toString())).toEqual({
      id: eventId,
      type: 'feature_flags.flag.updated',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      team_id: stack.h.team.teamId,
      environment_id: environmentId,
      revision: expect.stringMatching(/^\d+$/),
      sequence: 1,
      data: {
        flag_key: expect.any(String),
        change: 'created',
        changed_fields: ['enabled', 'value', 'description'],
        flag_version: '1',
        actor_key_id: stack.h.team.keyId,
      },
    });
    // Never a value: the receiver fetches the configuration itself.
    expect(hit!.body.toString()).not.toContain('rollout');
    const [delivery] = await until('the delivery to succeed', async () => {
      const list = await deliveries(sub.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    });
    expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 1, nextAttemptAt: null });
    expect(delivery!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, statusCode: 200, errorKind: null, error: null }),
    ]);
    // The engine's metrics count it (the worker shares this process's registry in the test stack).
    const metrics = await (await fetch(`${stack.h.rootUrl}/metrics`)).text();
    expect(metrics).toMatch(/^svc_subscription_delivery_attempts_total\{outcome="succeeded"\} [1-9]/m);
    expect(metrics).toMatch(/^svc_subscription_pending_deliveries \d+$/m);
  });

  it('sends nothing for an environment or event the subscription does not name', async () => {
    await subscribe('/scoped', { environment_ids: [otherEnvironmentId] });
    await change(environmentId);
    await quiet();
    expect(hitsOf('/scoped')).toHaveLength(0);
    await change(otherEnvironmentId);
    await waitForHits('/scoped', 1);
  });
});

describe('commit order', () => {
  it('a failing event holds back later ones of its subscription, not other subscriptions; retries on the schedule', async () => {
    let failures = 2;
    answers.set('/ordered', () => (failures-- > 0 ? { status: 500 } : { status: 200 }));
    const ordered = await subscribe('/ordered');
    const free = await subscribe('/free');
    const first = await change();
    const second = await change();
    const third = await change();
    // The other subscription gets all three at once, in order.
    const freeHits = await waitForHits('/free', 3);
    expect(freeHits.map((hit) => hit.event!.id)).toEqual([first, second, third]);
    expect(freeHits.map((hit) => hit.event!.sequence)).toEqual([1, 2, 3]);

    await attemptSettled('/ordered', 1, ordered.id, first);
    await quiet();
    expect(hitsOf('/ordered').map((hit) => hit.event!.id)).toEqual([first]);
    const waiting = await deliveryOf(ordered.id, second);
    expect(waiting).toMatchObject({ status: 'pending', ordered: true, nextAttemptAt: null, attemptCount: 0 });
    const head = await deliveryOf(ordered.id, first);
    expect(head.attempts[0]).toMatchObject({ statusCode: 500, errorKind: 'http_status' });
    expect(head.nextAttemptAt!.getTime() - stack.h.clock.now().getTime()).toBe(1 * MINUTE);

    await stack.advance(1 * MINUTE);
    await attemptSettled('/ordered', 2, ordered.id, first);
    await quiet();
    expect(hitsOf('/ordered')).toHaveLength(2);
    const retried = await deliveryOf(ordered.id, first);
    expect(retried.nextAttemptAt!.getTime() - stack.h.clock.now().getTime()).toBe(5 * MINUTE);

    await stack.advance(5 * MINUTE);
    const all = await waitForHits('/ordered', 5);
    expect(all.map((hit) => hit.event!.id)).toEqual([first, first, first, second, third]);
    expect(all.map((hit) => hit.event!.sequence)).toEqual([1, 1, 1, 2, 3]);
    expect(all.map((hit) => hit.headers['svc-event-id'])).toEqual([first, first, first, second, third]);
    expect(free.id).not.toBe(ordered.id);
  });

  it('after 24 hours of failures the blocked event steps out of the order and later events go on; it keeps retrying', async () => {
    // The subscription's first event (sequence 1) fails until `accept`. By its sequence, not its ID: the first
    // attempt may come before change() has returned the ID, and a request answered 200 then would end the test.
    let accept = false;
    answers.set('/blocked', (hit) => (!accept && hit.event?.sequence === 1 ? { status: 503 } : { status: 200 }));
    const sub = await subscribe('/blocked');
    const blockedId = await change();
    const later = await change();
    await attemptSettled('/blocked', 1, sub.id, blockedId);
    // Through the schedule: 1 m, 5 m, 15 m, 1 h, 4 h, 12 h — 17 h 21 m after the first failure.
    for (const [step, count] of [
      [1 * MINUTE, 2],
      [5 * MINUTE, 3],
      [15 * MINUTE, 4],
      [1 * HOUR, 5],
      [4 * HOUR, 6],
      [12 * HOUR, 7],
    ] as const) {
      await stack.advance(step);
      await attemptSettled('/blocked', count, sub.id, blockedId);
    }
    await quiet();
    expect(hitsOf('/blocked').every((hit) => hit.event!.id === blockedId)).toBe(true);
    expect((await deliveryOf(sub.id, later)).status).toBe('pending');

    // 24 hours after the first failure: the later event goes, the blocked one is released but not given up.
    await stack.advance(24 * HOUR - (17 * HOUR + 21 * MINUTE));
    const afterRelease = await waitForHits('/blocked', 8);
    expect(afterRelease[7]!.event!.id).toBe(later);
    const released = await deliveryOf(sub.id, blockedId);
    expect(released).toMatchObject({ status: 'pending', ordered: false, attemptCount: 7 });
    expect(released.releasedAt).not.toBeNull();
    expect(
      (
        await until('the later event to succeed', async () => {
          const d = await deliveryOf(sub.id, later);
          return d.status === 'succeeded' ? d : undefined;
        })
      ).attemptCount,
    ).toBe(1);

    // Its 24-hour retry (41 h 21 m after the first failure) still goes, out of order.
    accept = true;
    await stack.advance(41 * HOUR + 21 * MINUTE - 24 * HOUR);
    await waitForHits('/blocked', 9);
    const done = await until('the released event to succeed', async () => {
      const d = await deliveryOf(sub.id, hitsOf('/blocked')[0]!.event!.id);
      return d.status === 'succeeded' ? d : undefined;
    });
    expect(done.attemptCount).toBe(8);
  });

  it('gives up after the 48-hour retry: nine attempts in all, then nothing more', async () => {
    // The subscription's first event fails, known by its sequence (its first attempt may come before change()
    // returns its ID); the events of later tests succeed.
    answers.set('/exhausted', (hit) => (hit.event?.sequence === 1 ? { status: 500 } : { status: 200 }));
    const sub = await subscribe('/exhausted');
    const failing = await change();
    await attemptSettled('/exhausted', 1, sub.id, failing);
    const delays = [1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 1 * HOUR, 4 * HOUR, 12 * HOUR, 24 * HOUR, 48 * HOUR];
    for (const [index, delay] of delays.entries()) {
      await stack.advance(delay);
      await attemptSettled('/exhausted', index + 2, sub.id, failing);
    }
    const failed = await until('the delivery to fail', async () => {
      const d = await deliveryOf(sub.id, failing);
      return d.status === 'failed' ? d : undefined;
    });
    expect(failed.attemptCount).toBe(9);
    expect(failed.nextAttemptAt).toBeNull();
    await stack.advance(7 * DAY);
    await quiet();
    expect(hitsOf('/exhausted')).toHaveLength(9);
    expect(new Set(hitsOf('/exhausted').map((hit) => hit.event!.id))).toEqual(new Set([failing]));
  });
});

describe('410, deletion, rotation, manual retries', () => {
  it('a 410 stops retries and disables the subscription (endpoint_gone); nothing more is queued for it', async () => {
    answers.set('/gone', () => ({ status: 410 }));
    const sub = await subscribe('/gone');
    const eventId = await change();
    await waitForHits('/gone', 1);
    const failed = await until('the delivery to fail', async () => {
      const d = await deliveryOf(sub.id, eventId);
      return d.status === 'failed' ? d : undefined;
    });
    expect(failed.attemptCount).toBe(1);
    const read = await stack.h.request('GET', `/platform/event_subscriptions/${sub.id}`);
    expect(read.json).toMatchObject({ enabled: false, disabled_reason: 'endpoint_gone', version: '2' });
    await change();
    await stack.advance(1 * HOUR);
    await quiet();
    expect(hitsOf('/gone')).toHaveLength(1);
    // Enabling it again (If-Match) brings new events back.
    answers.set('/gone', () => ({ status: 200 }));
    const enabled = await stack.h.request('PATCH', `/platform/event_subscriptions/${sub.id}`, {
      ifMatch: read.headers.get('etag')!,
      body: { enabled: true },
    });
    expect(enabled.json).toMatchObject({ enabled: true, disabled_reason: null, version: '3' });
    await change();
    await waitForHits('/gone', 2);
  });

  it('deleting cancels pending deliveries; nothing is sent afterwards', async () => {
    answers.set('/deleted', () => ({ status: 500 }));
    const sub = await subscribe('/deleted');
    const first = await change();
    await change();
    await waitForHits('/deleted', 1);
    // The receiver has answered; wait for the attempt to be settled too (on a busy machine it may lag), so that
    // nothing is in flight when the subscription goes.
    await stack.until('the attempt settled', async () => {
      const rows: { leased: number }[] = await stack.h.services.db.query(
        `SELECT count(*) FILTER (WHERE lease_until IS NOT NULL)::int AS leased,
                (SELECT count(*) FROM subscription_attempts a JOIN subscription_deliveries d ON d.id = a.delivery_id
                  WHERE d.subscription_id = $1)::int AS attempts
           FROM subscription_deliveries WHERE subscription_id = $1`,
        [sub.id],
      );
      const row = rows[0] as { leased: number; attempts: number } | undefined;
      return row && row.leased === 0 && row.attempts >= 1 ? true : undefined;
    });
    const deleted = await stack.h.request('DELETE', `/platform/event_subscriptions/${sub.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ id: sub.id, deleted: true, in_flight_may_complete: false });
    const rows: { status: string }[] = await stack.h.services.db.query(
      `SELECT status FROM subscription_deliveries WHERE subscription_id = $1 ORDER BY sequence`,
      [sub.id],
    );
    expect(rows.map((row) => row.status)).toEqual(['canceled', 'canceled']);
    await stack.advance(1 * HOUR);
    await quiet();
    expect(hitsOf('/deleted').map((hit) => hit.event!.id)).toEqual([first]);
    expect((await stack.h.request('GET', `/platform/event_subscriptions/${sub.id}/deliveries`)).status).toBe(404);
  });

  it('during a rotation overlap every delivery carries one v1 per secret; afterwards only the new one', async () => {
    const sub = await subscribe('/rotated');
    const rotated = await post(stack.h, `/platform/event_subscriptions/${sub.id}/rotate_secret`, {
      overlap_seconds: 3600,
    });
    expect(rotated.status, rotated.text).toBe(200);
    const newSecret = rotated.json.secret as string;
    expect(newSecret).not.toBe(sub.secret);
    expect(new Date(rotated.json.secret_rotation_ends_at).getTime()).toBe(stack.h.clock.now().getTime() + HOUR);
    await change();
    const [during] = await waitForHits('/rotated', 1);
    const header = during!.headers['svc-signature'] as string;
    expect(header.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(2);
    const now = Math.floor(Date.now() / 1000);
    expect(verifyAsSpecSays(sub.secret, header, during!.body, now)).toBe(true);
    expect(verifyAsSpecSays(newSecret, header, during!.body, now)).toBe(true);

    await stack.advance(HOUR + SECOND);
    await change();
    const after = (await waitForHits('/rotated', 2))[1]!;
    const single = after.headers['svc-signature'] as string;
    expect(single.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(1);
    expect(verifyAsSpecSays(newSecret, single, after.body, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verifyAsSpecSays(sub.secret, single, after.body, Math.floor(Date.now() / 1000))).toBe(false);
    const read = await stack.h.request('GET', `/platform/event_subscriptions/${sub.id}`);
    expect(read.json.secret_rotation_ends_at).toBeNull();
  });

  it('a manual retry sends the original event again (same ID and sequence), once, outside the order', async () => {
    const sub = await subscribe('/manual');
    const eventId = await change();
    await waitForHits('/manual', 1);
    const original = await until('the delivery to succeed', async () => {
      const d = await deliveryOf(sub.id, eventId);
      return d?.status === 'succeeded' ? d : undefined;
    });
    answers.set('/manual', () => ({ status: 500 }));
    const retry = await post(stack.h, `/platform/event_subscriptions/${sub.id}/deliveries/${original.id}/retry`, {});
    expect(retry.status, retry.text).toBe(202);
    expect(retry.json).toEqual({ id: expect.stringMatching(/^whd_/), event_id: eventId });
    const [first, again] = await waitForHits('/manual', 2);
    expect(again!.headers['svc-event-id']).toBe(eventId);
    expect(again!.event!.sequence).toBe(first!.event!.sequence);
    const manual = await until('the manual delivery to fail', async () => {
      const list = await deliveries(sub.id);
      const d = list.find((item) => item.id === retry.json.id);
      return d?.status === 'failed' ? d : undefined;
    });
    expect(manual).toMatchObject({ trigger: 'manual', attemptCount: 1, ordered: false });
    // Newest first: the manual retry is listed before the original.
    expect((await deliveries(sub.id)).map((d) => d.id)).toEqual([retry.json.id, original.id]);
    await stack.advance(1 * HOUR);
    await quiet();
    expect(hitsOf('/manual')).toHaveLength(2);
    expect(
      (
        await post(
          stack.h,
          `/platform/event_subscriptions/${sub.id}/deliveries/whd_00000000000000000000000000/retry`,
          {},
        )
      ).status,
    ).toBe(404);
  });

  it('the test operation queues a feature_flags.webhook.test event holding only endpoint_id', async () => {
    const sub = await subscribe('/test-event');
    const queued = await post(stack.h, `/platform/event_subscriptions/${sub.id}/test`, undefined);
    expect(queued.status, queued.text).toBe(202);
    expect(queued.json).toEqual({ event_id: expect.stringMatching(/^evt_/), endpoint_id: sub.id });
    const [hit] = await waitForHits('/test-event', 1);
    expect(JSON.parse(hit!.body.toString())).toEqual({
      id: queued.json.event_id,
      type: 'feature_flags.webhook.test',
      created_at: expect.any(String),
      team_id: stack.h.team.teamId,
      environment_id: null,
      revision: null,
      sequence: 1,
      data: { endpoint_id: sub.id },
    });
    expect(
      verifyAsSpecSays(sub.secret, hit!.headers['svc-signature'] as string, hit!.body, Math.floor(Date.now() / 1000)),
    ).toBe(true);
  });
});

describe('chat formats', () => {
  let chatEnvironment: string;
  beforeAll(async () => {
    // A hostile environment name: it must not ping a channel in any chat service.
    chatEnvironment = (
      await post(stack.h, '/platform/feature_flags/environments', { name: '@everyone <!channel> @here <at>all</at>' })
    ).json.id;
  });

  async function chatSubscription(path: string, format: string) {
    return subscribe(path, { format, environment_ids: [chatEnvironment] });
  }

  it('chat_a (Slack): a readable summary, signed like any delivery; Slack answers 200 ok', async () => {
    answers.set('/slack', () => ({ status: 200, body: 'ok' }));
    const sub = await chatSubscription('/slack', 'chat_a');
    const eventId = await change(chatEnvironment, 'checkout.v2');
    const [hit] = await waitForHits('/slack', 1);
    expect(hit!.headers['svc-event-id']).toBe(eventId);
    expect(
      verifyAsSpecSays(sub.secret, hit!.headers['svc-signature'] as string, hit!.body, Math.floor(Date.now() / 1000)),
    ).toBe(true);
    const body = JSON.parse(hit!.body.toString()) as { text: string; blocks: unknown[] };
    expect(typeof body.text).toBe('string');
    expect(Array.isArray(body.blocks)).toBe(true);
    const text = hit!.body.toString();
    expect(text).toContain('checkout.v2');
    expect(text).toContain(chatEnvironment);
    expect(text).not.toMatch(/<!(channel|everyone|here)>/);
    expect(text).not.toMatch(/@(everyone|here|channel)\b/);
    expect(text).not.toContain('rollout');
    await until('the delivery to succeed', async () => {
      const d = await deliveryOf(sub.id, eventId);
      return d?.status === 'succeeded' ? d : undefined;
    });
  });

  it('chat_c (Discord): posts with wait=true and no mentions; a dead webhook stops and disables (chat_webhook_gone)', async () => {
    answers.set('/discord/ok', () => ({
      status: 200,
      body: '{"id":"1"}',
      headers: { 'content-type': 'application/json' },
    }));
    const ok = await chatSubscription('/discord/ok', 'chat_c');
    answers.set('/discord/gone', () => ({
      status: 404,
      body: '{"message": "Unknown Webhook", "code": 10015}',
      headers: { 'content-type': 'application/json' },
    }));
    const gone = await chatSubscription('/discord/gone', 'chat_c');
    const eventId = await change(chatEnvironment);
    const [hit] = await waitForHits('/discord/ok', 1);
    expect(new URL(hit!.path, 'http://x').searchParams.get('wait')).toBe('true');
    const body = JSON.parse(hit!.body.toString()) as { allowed_mentions: { parse: unknown[] } };
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(hit!.body.toString()).not.toMatch(/@(everyone|here)\b/);
    await waitForHits('/discord/gone', 1);
    const failed = await until('the dead webhook delivery to fail', async () => {
      const d = await deliveryOf(gone.id, eventId);
      return d?.status === 'failed' ? d : undefined;
    });
    expect(failed.attemptCount).toBe(1);
    const read = await stack.h.request('GET', `/platform/event_subscriptions/${gone.id}`);
    expect(read.json).toMatchObject({ enabled: false, disabled_reason: 'chat_webhook_gone' });
    await stack.advance(1 * HOUR);
    await quiet();
    expect(hitsOf('/discord/gone')).toHaveLength(1);
    expect(ok.id).not.toBe(gone.id);
  });

  it('chat_c (Discord) 429: waits at least its retry_after before trying again', async () => {
    let limited = true;
    answers.set('/discord/limited', () =>
      limited
        ? {
            status: 429,
            body: '{"message": "You are being rate limited.", "retry_after": 600.5, "global": false}',
            headers: { 'content-type': 'application/json' },
          }
        : { status: 204, body: '' },
    );
    const sub = await chatSubscription('/discord/limited', 'chat_c');
    const eventId = await change(chatEnvironment);
    await waitForHits('/discord/limited', 1);
    const waiting = await until('the retry to be scheduled', async () => {
      const d = await deliveryOf(sub.id, eventId);
      return d?.nextAttemptAt && d.attempts.length === 1 ? d : undefined;
    });
    expect(waiting.nextAttemptAt!.getTime() - stack.h.clock.now().getTime()).toBeGreaterThanOrEqual(601 * SECOND);
    await stack.advance(5 * MINUTE);
    await quiet();
    expect(hitsOf('/discord/limited')).toHaveLength(1);
    limited = false;
    await stack.advance(6 * MINUTE);
    await waitForHits('/discord/limited', 2);
    await until('the delivery to succeed', async () => {
      const d = await deliveryOf(sub.id, eventId);
      return d?.status === 'succeeded' ? d : undefined;
    });
  });

  it('chat_b (Microsoft Teams): an Adaptive Card message; the workflow answers 202', async () => {
    answers.set('/teams', () => ({ status: 202, body: '' }));
    const sub = await chatSubscription('/teams', 'chat_b');
    const eventId = await change(chatEnvironment);
    const [hit] = await waitForHits('/teams', 1);
    const body = JSON.parse(hit!.body.toString()) as {
      type: string;
      attachments: { contentType: string; content: { type: string } }[];
    };
    expect(body.type).toBe('message');
    expect(body.attachments[0]).toMatchObject({
      contentType: 'application/vnd.microsoft.card.adaptive',
      content: { type: 'AdaptiveCard' },
    });
    expect(hit!.body.byteLength).toBeLessThan(28 * 1024);
    expect(hit!.body.toString()).not.toContain('<at>');
    await until('the delivery to succeed', async () => {
      const d = await deliveryOf(sub.id, eventId);
      return d?.status === 'succeeded' ? d : undefined;
    });
  });
});

describe('safety net and history', () => {
  it('a delivery whose job was lost is queued again by the sweep and delivered', async () => {
    const sub = await subscribe('/lost');
    await stack.stopWorker();
    const eventId = await change();
    // The job is lost (as if its row had vanished); the delivery stays pending with nobody to run it.
    await stack.h.services.db.query(
      `DELETE FROM pgboss.job WHERE name = 'platform.subscription-delivery' AND data->>'delivery_id' IN (
         SELECT id FROM subscription_deliveries WHERE subscription_id = $1)`,
      [sub.id],
    );
    stack.h.clock.advance(3 * MINUTE);
    const report = await stack.h.services.subscriptionDispatch.sweep();
    expect(report.requeued).toBeGreaterThanOrEqual(1);
    await stack.startWorker();
    const [hit] = await waitForHits('/lost', 1);
    expect(hit!.headers['svc-event-id']).toBe(eventId);
  });

  it('keeps events and deliveries 30 days', async () => {
    const sub = await subscribe('/history');
    const eventId = await change();
    await waitForHits('/history', 1);
    await until('the delivery to succeed', async () => {
      const d = await deliveryOf(sub.id, eventId);
      return d?.status === 'succeeded' ? d : undefined;
    });
    expect((await stack.h.request('GET', `/platform/events/${eventId}`)).status).toBe(200);
    stack.h.clock.advance(30 * DAY + SECOND);
    expect((await stack.h.request('GET', `/platform/events/${eventId}`)).status).toBe(404);
    expect(await deliveries(sub.id)).toEqual([]);
    const report = await stack.h.services.subscriptionDispatch.sweep();
    expect(report.purgedDeliveries).toBeGreaterThanOrEqual(1);
    expect(report.purgedEvents).toBeGreaterThanOrEqual(1);
    const rows: unknown[] = await stack.h.services.db.query(`SELECT 1 FROM platform_events WHERE id = $1`, [eventId]);
    expect(rows).toHaveLength(0);
  });
});
