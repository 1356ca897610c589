import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import type { StreamEventData } from '@svc/core';
import { useFaultStack } from '../../../worker/src/fault/fault-stack.js';
import { until } from '../../../worker/src/fault/processes.js';
import { SseClient } from './sse-client.testing.js';

/**
 * kill -9 of the server process that holds a stream: the receiver reconnects (to the restarted server) and gets
 * every delivery it had not acknowledged, with the same webhook-id; what it had acknowledged is not sent again.
 * The server runs as a real process from the production bundle.
 */
const stack = useFaultStack();

describe('a stream across a kill -9 of its server', () => {
  it('loses nothing: the reconnected receiver gets what it had not acknowledged, once more, and nothing else', async () => {
    const { d } = stack;
    const tenant = await d.api('POST', '/tenants', { external_id: 'crash-stream', name: 'Crash' });
    const endpoint = await d.api('POST', '/endpoints', {
      tenant_id: tenant.json.id,
      delivery_mode: 'stream',
      timeout_seconds: 30,
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const endpointId: string = endpoint.json.id;
    const token = (await d.api('POST', `/endpoints/${endpointId}/stream-tokens`, { name: 'crash' })).json
      .token as string;
    const streamUrl = `${d.apiUrl}/endpoints/${endpointId}/stream`;
    const ack = (acks: { delivery_id: string; attempt: number; status: number }[]) =>
      fetch(`${d.apiUrl}/endpoints/${endpointId}/stream/acks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ acks }),
      });

    const first = await SseClient.open(streamUrl, token);
    expect(first.status).toBe(200);
    const messages: string[] = [];
    for (let i = 0; i < 5; i += 1) messages.push((await d.publish(tenant.json.id, { i })).json.id);
    // max_concurrency 3: three are in flight; one of them is acknowledged before the kill.
    const held = await first.waitForDeliveries(3);
    expect((await ack([{ delivery_id: held[0]!.delivery_id, attempt: 1, status: 200 }])).status).toBe(200);
    await first.waitForDeliveries(4);
    const acknowledged = new Set([held[0]!.delivery_id]);
    const unacknowledged = first.deliveries.filter((e) => !acknowledged.has(e.delivery_id));
    expect(unacknowledged).toHaveLength(3);

    await d.server.kill9();
    await first.waitFor('the stream to end', () => (first.ended ? true : undefined));
    const restartedAt = Date.now();
    await d.restartServer();

    // The receiver reconnects with back-off and acknowledges everything it gets.
    let second: SseClient | null = null;
    await until('a reconnected stream', async () => {
      const attempt = await SseClient.open(streamUrl, token).catch(() => null);
      if (attempt?.status === 200) second = attempt;
      else await new Promise((resolve) => setTimeout(resolve, 250));
      return second ?? undefined;
    });
    const reconnected = second! as SseClient;
    const seen: StreamEventData[] = [];
    await until(
      'every message delivered',
      async () => {
        const key = (e: StreamEventData) => `${e.delivery_id}.${e.attempt}`;
        const known = new Set(seen.map(key));
        const fresh = reconnected.deliveries.filter((e) => !known.has(key(e)));
        seen.push(...fresh);
        if (fresh.length > 0)
          await ack(fresh.map((e) => ({ delivery_id: e.delivery_id, attempt: e.attempt, status: 200 })));
        for (const e of fresh) acknowledged.add(e.delivery_id);
        return acknowledged.size === 5 ? true : undefined;
      },
      45_000,
    );
    // The dead stream's leases come back once its beat is 5 s old: within seconds of the restart.
    expect(Date.now() - restartedAt).toBeLessThan(30_000);
    // Exactly the three unacknowledged ones came again (attempt 2, same webhook-id), the acknowledged one never.
    const again = seen.filter((e) => e.attempt === 2);
    expect(new Set(again.map((e) => e.delivery_id))).toEqual(new Set(unacknowledged.map((e) => e.delivery_id)));
    for (const e of again) {
      const before = unacknowledged.find((u) => u.delivery_id === e.delivery_id)!;
      expect(e.headers['webhook-id']).toBe(before.headers['webhook-id']);
    }
    expect(seen.some((e) => e.delivery_id === held[0]!.delivery_id)).toBe(false);
    expect(seen).toHaveLength(4);
    // Every one verifies with the endpoint's secret and every message ends succeeded.
    for (const e of seen) expect(new Webhook(endpoint.json.signing_secret).verify(e.body!, e.headers)).toBeTruthy();
    await until('all succeeded', async () => {
      const rows = (await d.core.services.db.query(
        `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`,
        [endpointId],
      )) as { n: number }[];
      return rows[0]!.n === 5 ? true : undefined;
    });
    reconnected.close();
  }, 120_000);
});
