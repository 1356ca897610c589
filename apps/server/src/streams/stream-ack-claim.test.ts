import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryStack, type DeliveryStack } from '../../../worker/src/delivery/delivery.testing.js';
import { post } from '../testing/harness.js';
import type { SseClient } from './sse-client.testing.js';
import {
  ack,
  deliveryRecord,
  FAST_STREAMS,
  openStream,
  streamEndpoint,
  type StreamEndpoint,
} from './stream.testing.js';

// An acknowledgement that reaches the server holding a stream of its endpoint is settled in the same transaction
// (and round trip) as that stream's next claim (docs/streams.md, "Acknowledgements"; stream-claim.ts).

let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack({}, { realClock: true, serverEnv: FAST_STREAMS });
});
afterAll(async () => {
  await stack.close();
});

/** The endpoint's queue rows leased to a stream connection now (not a timeout sweep's). */
async function leases(endpoint: StreamEndpoint): Promise<{ delivery_id: string; lease_owner: string }[]> {
  return (await stack.h.services.db.query(
    `SELECT delivery_id, lease_owner FROM delivery_queue
      WHERE endpoint_id = $1 AND lease_owner LIKE 'wdc\\_%' AND lease_owner NOT LIKE 'wdc\\_sweep\\_%'
        AND due_at > now()`,
    [endpoint.endpointId],
  )) as { delivery_id: string; lease_owner: string }[];
}

describe('acknowledgements on the server holding the stream', () => {
  it('answer only once the next delivery is leased to the stream: settled and claimed in one transaction', async () => {
    const stream = await streamEndpoint(stack, { max_concurrency: 1 });
    for (let i = 0; i < 3; i += 1) await stack.publish(stream.tenantId, { i });
    const client = await openStream(stack, stream);
    const connections = await stack.h.request('GET', `/endpoints/${stream.endpointId}/stream-connections`);
    const connectionId = connections.json.data[0].id as string;
    for (let i = 0; i < 3; i += 1) {
      const events = await client.waitForDeliveries(i + 1);
      const head = events[i]!;
      const acked = await ack(stack, stream, [{ delivery_id: head.delivery_id, attempt: head.attempt, status: 200 }]);
      expect(acked.json.results).toEqual([{ delivery_id: head.delivery_id, result: 'settled' }]);
      // No wait: when the answer comes, the room the acknowledgement freed is taken by the stream already (before,
      // the claim ran after the answer, on a wake-up).
      const held = await leases(stream);
      if (i < 2) {
        expect(held).toHaveLength(1);
        expect(held[0]!.lease_owner).toBe(connectionId);
        expect(held[0]!.delivery_id).not.toBe(head.delivery_id);
      } else expect(held).toEqual([]);
    }
    const all = await client.waitForDeliveries(3);
    for (const event of all) expect((await deliveryRecord(stack, event.delivery_id)).status).toBe('succeeded');
    client.close();
  });

  it('never leases past max_concurrency when two connections acknowledge at once, each claim with its settlement', async () => {
    const stream = await streamEndpoint(stack, { max_concurrency: 3 });
    const total = 40;
    for (let i = 0; i < total; i += 1) await stack.publish(stream.tenantId, { i });
    const a = await openStream(stack, stream);
    const b = await openStream(stack, stream);
    // The database's own count of live leases, sampled while both readers acknowledge as fast as they can.
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, (await leases(stream)).length);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const acked = new Set<string>();
    const answer = async (client: SseClient) => {
      const deadline = Date.now() + 30_000;
      while (acked.size < total) {
        if (Date.now() > deadline) throw new Error(`acknowledged ${acked.size} of ${total}`);
        const batch = client.deliveries.filter((d) => !acked.has(`${d.delivery_id}.${d.attempt}`));
        if (batch.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 2));
          continue;
        }
        for (const d of batch) acked.add(`${d.delivery_id}.${d.attempt}`);
        const answered = await ack(
          stack,
          stream,
          batch.map((d) => ({ delivery_id: d.delivery_id, attempt: d.attempt, status: 200 })),
        );
        expect(answered.status).toBe(200);
      }
    };
    await Promise.all([answer(a), answer(b)]);
    sampling = false;
    await sampler;
    const all = [...a.deliveries, ...b.deliveries];
    expect(all).toHaveLength(total);
    expect(new Set(all.map((d) => d.delivery_id)).size).toBe(total);
    expect(a.deliveries.length).toBeGreaterThan(0);
    expect(b.deliveries.length).toBeGreaterThan(0);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(3);
    const [{ n }] = (await stack.h.services.db.query(
      `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`,
      [stream.endpointId],
    )) as [{ n: number }];
    expect(n).toBe(total);
    a.close();
    b.close();
  });

  it("settle an acknowledgement on the circuit as it is, when another process's settlement moved it since", async () => {
    const stream = await streamEndpoint(stack, { max_concurrency: 1 });
    for (let i = 0; i < 2; i += 1) await stack.publish(stream.tenantId, { i });
    const client = await openStream(stack, stream);
    const [first] = await client.waitForDeliveries(1);
    // The first answer leaves this process the circuit it settles the next ones on (closed, no failures).
    await ack(stack, stream, [{ delivery_id: first!.delivery_id, attempt: 1, status: 200 }]);
    const [, second] = await client.waitForDeliveries(2);
    // As another process's settlement (a timeout sweep, an acknowledgement elsewhere) leaves it: 3 failures.
    await stack.h.services.db.query(
      `UPDATE endpoint_health SET consecutive_failures = 3, last_failure_at = now() WHERE endpoint_id = $1`,
      [stream.endpointId],
    );
    const settled = await ack(stack, stream, [{ delivery_id: second!.delivery_id, attempt: 1, status: 200 }]);
    expect(settled.json.results).toEqual([{ delivery_id: second!.delivery_id, result: 'settled' }]);
    // The success resets the count, as it does for a push attempt; settled on the remembered circuit (a quiet
    // success: nothing to write) the 3 failures would stay.
    const [health] = (await stack.h.services.db.query(
      `SELECT consecutive_failures FROM endpoint_health WHERE endpoint_id = $1`,
      [stream.endpointId],
    )) as [{ consecutive_failures: number }];
    expect(health.consecutive_failures).toBe(0);
    client.close();
  });

  it('refuse a token revoked in the database at once, before this process hears of it', async () => {
    const stream = await streamEndpoint(stack, { max_concurrency: 1 });
    const other = await post(stack.h, `/endpoints/${stream.endpointId}/stream-tokens`, { name: 'acks' });
    for (let i = 0; i < 3; i += 1) await stack.publish(stream.tenantId, { i });
    const client = await openStream(stack, stream);
    const [first] = await client.waitForDeliveries(1);
    await ack(stack, stream, [{ delivery_id: first!.delivery_id, attempt: 1, status: 200 }], other.json.token);
    const [, second] = await client.waitForDeliveries(2);
    // As another server process's revocation looks here until its notification arrives: the row only.
    await stack.h.services.db.query(`UPDATE stream_tokens SET revoked_at = now() WHERE id = $1`, [other.json.id]);
    const refused = await ack(
      stack,
      stream,
      [{ delivery_id: second!.delivery_id, attempt: 1, status: 200 }],
      other.json.token,
    );
    expect(refused.status).toBe(401);
    expect(refused.json.error?.code).toBe('unauthorized');
    expect((await deliveryRecord(stack, second!.delivery_id)).status).not.toBe('succeeded');
    // The stream's own token still answers it.
    const settled = await ack(stack, stream, [{ delivery_id: second!.delivery_id, attempt: 1, status: 200 }]);
    expect(settled.json.results).toEqual([{ delivery_id: second!.delivery_id, result: 'settled' }]);
    client.close();
  });

  it("wake the endpoint's streams in other processes from the same transaction, and only when there are some", async () => {
    const stream = await streamEndpoint(stack, { max_concurrency: 1 });
    for (let i = 0; i < 3; i += 1) await stack.publish(stream.tenantId, { i });
    const listener = new pg.Client({ connectionString: stack.h.databaseUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => {
      if (message.payload?.endsWith(`:${stream.endpointId}`)) heard.push(message.payload);
    });
    await listener.query('LISTEN svc_stream_wake');
    try {
      const client = await openStream(stack, stream);
      const [first] = await client.waitForDeliveries(1);
      // This process holds every stream of the endpoint: it pumps them itself, nobody else is told.
      await ack(stack, stream, [{ delivery_id: first!.delivery_id, attempt: 1, status: 200 }]);
      const [, second] = await client.waitForDeliveries(2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard).toEqual([]);
      // A connection of another server process (its row only, as that process registers it).
      await stack.h.services.streamConnections.open(
        {
          id: 'wdc_otherprocess0000000000000',
          teamId: stack.h.team.teamId,
          endpointId: stream.endpointId,
          tokenId: stream.tokenId,
          remoteAddress: '127.0.0.1',
        },
        { perEndpoint: 10, perTeam: 100 },
      );
      await ack(stack, stream, [{ delivery_id: second!.delivery_id, attempt: 1, status: 200 }]);
      await client.waitFor('the wake-up', () => (heard.length > 0 ? heard : undefined), 5000);
      expect(heard).toHaveLength(1);
      client.close();
    } finally {
      await listener.end();
    }
  });
});
