import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryStack, type DeliveryStack } from '../../../worker/src/delivery/delivery.testing.js';
import { post } from '../testing/harness.js';
import { ack, FAST_STREAMS, openStream, streamEndpoint } from './stream.testing.js';

// A reader that floods the acknowledgement route (docs/streams.md, "Acknowledgements"): each stream token may
// acknowledge SVC_STREAM_ACKS_PER_SECOND deliveries a second in each server process (a burst of twice that), and is
// refused with 429 rate_limited and Retry-After past it, before anything is looked up. Here 50 a second, burst 100.

let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack(
    {},
    { realClock: true, serverEnv: { ...FAST_STREAMS, SVC_STREAM_ACKS_PER_SECOND: '50' } },
  );
});
afterAll(async () => {
  await stack.close();
});

const unknownAcks = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ delivery_id: `wdd_flood${i}`, attempt: 1, status: 200 }));

describe('an acknowledgement flood', () => {
  it('is refused with 429 and Retry-After past the token’s budget, which refills with time; other tokens go on', async () => {
    const stream = await streamEndpoint(stack, { max_concurrency: 1 });
    const hostile = await post(stack.h, `/endpoints/${stream.endpointId}/stream-tokens`, { name: 'hostile' });
    const hostileToken = hostile.json.token as string;
    // The burst: 100 acknowledgements (a batch counts each one), answered `unknown`.
    const first = await ack(stack, stream, unknownAcks(60), hostileToken);
    expect(first.status).toBe(200);
    expect(first.json.results!.every((r) => r.result === 'unknown')).toBe(true);
    // Waves of concurrent requests: far faster than the budget refills (50 a second), however loaded the machine.
    let refused: Response | null = null;
    const startedAt = Date.now();
    for (let wave = 0; wave < 40 && refused === null; wave += 1) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${stack.h.baseUrl}/endpoints/${stream.endpointId}/stream/acks`, {
            method: 'POST',
            headers: { authorization: `Bearer ${hostileToken}`, 'content-type': 'application/json' },
            body: JSON.stringify({ acks: unknownAcks(10) }),
          }),
        ),
      );
      for (const response of responses) {
        if (response.status === 429) refused ??= response;
        else {
          expect(response.status).toBe(200);
          await response.arrayBuffer();
        }
      }
    }
    expect(refused).not.toBeNull();
    const elapsedS = (Date.now() - startedAt) / 1000;
    // At most the burst and what refilled meanwhile got through before the refusal.
    const body = (await refused!.json()) as { error: { code: string } };
    expect(body.error.code).toBe('rate_limited');
    const retryAfter = Number(refused!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(elapsedS).toBeLessThan(20);
    // A full batch is refused too while the budget is spent, and a batch that is not valid JSON costs a token as well.
    expect((await ack(stack, stream, unknownAcks(100), hostileToken)).status).toBe(429);

    // The stream's own token is not touched by the other token's flood: its deliveries are acknowledged as usual.
    const client = await openStream(stack, stream);
    await stack.publish(stream.tenantId, { n: 1 });
    const [delivery] = await client.waitForDeliveries(1);
    const settled = await ack(stack, stream, [{ delivery_id: delivery!.delivery_id, attempt: 1, status: 200 }]);
    expect(settled.json.results).toEqual([{ delivery_id: delivery!.delivery_id, result: 'settled' }]);

    // On the real clock: after Retry-After the hostile token's budget has refilled.
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 200));
    const again = await ack(stack, stream, unknownAcks(10), hostileToken);
    expect(again.status).toBe(200);
    client.close();
  });

  it('counts requests whose body is refused, and refuses a bad token as before', async () => {
    const stream = await streamEndpoint(stack);
    let limited = false;
    for (let wave = 0; wave < 40 && !limited; wave += 1) {
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${stack.h.baseUrl}/endpoints/${stream.endpointId}/stream/acks`, {
            method: 'POST',
            headers: { authorization: `Bearer ${stream.token}`, 'content-type': 'application/json' },
            body: '{"acks":',
          }).then(async (response) => (await response.arrayBuffer(), response.status)),
        ),
      );
      for (const status of statuses) {
        if (status === 429) limited = true;
        else expect(status).toBe(400);
      }
    }
    expect(limited).toBe(true);
    // A token of the wrong shape is 401 whatever the budget of others.
    const bad = await ack(stack, stream, unknownAcks(1), 'whst_nope');
    expect(bad.status).toBe(401);
  });
});
