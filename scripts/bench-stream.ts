/**
 * The `stream` figure of `npm run bench` (docs/benchmarks.md): deliveries per second through one stream connection
 * (GET /v1/endpoints/{id}/stream) read by a plain Node SSE reader that acknowledges in batches (every delivery that
 * arrived while its previous acknowledgement was in flight goes in the next one), against the same run's push figure
 * and ceiling. The server and the worker run as production processes (scripts/bench-delivery-harness.ts).
 *
 *   stream   N deliveries queued for a stream endpoint (max_concurrency 3, the most an endpoint may have), then one
 *            connection opens: deliveries per second until the last is settled succeeded
 *   push     N deliveries queued for a paused push endpoint (max_concurrency 3, rate_per_second 1,000) with a loopback receiver answering
 *            204 at once, then it is enabled: deliveries per second until the last is settled succeeded
 *   ceiling  raw POSTs to the same receiver, 3 in flight (what 3 requests at a time can carry on this machine)
 */
import http from 'node:http';
import { sleep } from './bench-delivery-env.js';
import { buildServices } from './bench-delivery-env.js';
import { startHarness, type Harness } from './bench-delivery-harness.js';

const MESSAGES = Number(process.env['BENCH_STREAM_MESSAGES'] ?? 1000);
const CONCURRENCY = 3;
const ROUNDS = 2;

export interface StreamFigures {
  /** Deliveries per round; push and stream run ROUNDS (2) rounds each, alternating. */
  messages: number;
  /** Deliveries per second through one stream connection with batched acknowledgements. */
  stream_per_s: number;
  /** Deliveries per second of a push endpoint with the same max_concurrency, same run. */
  push_per_s: number;
  /** Raw POSTs per second to the push receiver, 3 in flight. */
  ceiling_per_s: number;
  stream_to_push: number;
  stream_to_ceiling: number;
  push_to_ceiling: number;
  /** Acknowledgement requests the reader sent, and deliveries per request. */
  ack_requests: number;
  deliveries_per_ack: number;
}

interface Api {
  (
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{
    status: number;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    json: any;
    headers: Headers;
  }>;
}

function apiOf(origin: string, key: string): Api {
  let n = 0;
  return async (method, path, body, headers = {}) => {
    n += 1;
    const response = await fetch(`${origin}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(method === 'POST' ? { 'idempotency-key': `bench-stream-${process.pid}-${n}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined, headers: response.headers };
  };
}

async function publishMany(api: Api, tenantId: string, n: number): Promise<void> {
  let next = 0;
  const one = async () => {
    while (next < n) {
      const i = next++;
      for (;;) {
        const r = await api('POST', '/messages', { tenant_id: tenantId, event_type: 'bench.stream', payload: { i } });
        if (r.status === 202) break;
        if (r.status !== 429) throw new Error(`publish: ${r.status} ${JSON.stringify(r.json)}`);
        await sleep(100);
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, one));
}

async function succeeded(h: Harness, endpointId: string): Promise<number> {
  const rows = (await h.core.services.db.query(
    `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`,
    [endpointId],
  )) as { n: number }[];
  return rows[0]!.n;
}

async function untilSucceeded(h: Harness, endpointId: string, n: number, started: number): Promise<number> {
  for (;;) {
    if ((await succeeded(h, endpointId)) >= n) return (Date.now() - started) / 1000;
    if (Date.now() - started > 300_000) throw new Error('deliveries did not finish within 5 minutes');
    await sleep(10);
  }
}

/**
 * The reader: a plain node:http GET of the stream, parsing events by hand, acknowledging 200 for each delivery in
 * batches (one request in flight; what arrives meanwhile waits for the next).
 */
function readStream(origin: string, endpointId: string, token: string) {
  const pending: { delivery_id: string; attempt: number; status: number }[] = [];
  let inFlight = false;
  let ackRequests = 0;
  let acked = 0;
  const flush = (): void => {
    if (inFlight || pending.length === 0) return;
    inFlight = true;
    const batch = pending.splice(0, 100);
    ackRequests += 1;
    void fetch(`${origin}/v1/endpoints/${endpointId}/stream/acks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ acks: batch }),
    })
      .then((r) => r.text())
      .then(() => {
        acked += batch.length;
        inFlight = false;
        flush();
      });
  };
  const request = http.get(`${origin}/v1/endpoints/${endpointId}/stream`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
  });
  request.on('response', (response) => {
    response.setEncoding('utf8');
    let buffer = '';
    response.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!block.includes('event: delivery')) continue;
        const data = block
          .split('\n')
          .find((line) => line.startsWith('data: '))!
          .slice(6);
        const { delivery_id, attempt } = JSON.parse(data) as { delivery_id: string; attempt: number };
        pending.push({ delivery_id, attempt, status: 200 });
      }
      flush();
    });
  });
  request.on('error', () => undefined);
  return {
    stats: () => ({ ackRequests, acked }),
    close: () => request.destroy(),
  };
}

async function rawPostsPerSecond(url: string, seconds: number): Promise<number> {
  const until = Date.now() + seconds * 1000;
  let n = 0;
  const one = async () => {
    while (Date.now() < until) {
      const r = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      await r.arrayBuffer();
      n += 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, one));
  return n / seconds;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function runStreamBench(): Promise<{ stream: StreamFigures }> {
  const build = await buildServices();
  const h = await startHarness(build, { durable: false, label: 'stream-' });
  try {
    const team = await h.core.services.teams.createTeam('bench-stream');
    const key = await h.core.services.teams.createKey(team.id);
    await h.core.services.teams.setPaymentCard(team.id, true);
    const api = apiOf(h.origin, key.secret);
    await api('POST', '/event_types', { name: 'bench.stream' });

    // Push and stream alternate, twice each, so a change of the shared machine's load falls on both alike.
    let pushSeconds = 0;
    let streamSeconds = 0;
    let ackRequests = 0;
    for (let round = 1; round <= ROUNDS; round += 1) {
      console.log(`stream: round ${round}, ${MESSAGES} deliveries through a push endpoint`);
      const pushTenant = (await api('POST', '/tenants', { external_id: `push-${round}`, name: 'Push' })).json
        .id as string;
      const push = await api('POST', '/endpoints', {
        tenant_id: pushTenant,
        url: h.receivers.url('fast', `stream-push-${round}`),
        status: 'paused',
        max_concurrency: CONCURRENCY,
        // The most an endpoint may have: the figure is about the engine, not the endpoint's own rate limit (50/s).
        rate_per_second: 1000,
      });
      await publishMany(api, pushTenant, MESSAGES);
      const pushStarted = Date.now();
      const enabled = await api(
        'PATCH',
        `/endpoints/${push.json.id}`,
        { status: 'enabled' },
        { 'if-match': push.headers.get('etag')! },
      );
      if (enabled.status !== 200) throw new Error(`enable: ${enabled.status}`);
      pushSeconds += await untilSucceeded(h, push.json.id, MESSAGES, pushStarted);

      console.log(`stream: round ${round}, ${MESSAGES} deliveries through one stream connection`);
      const streamTenant = (await api('POST', '/tenants', { external_id: `stream-${round}`, name: 'Stream' })).json
        .id as string;
      const stream = await api('POST', '/endpoints', {
        tenant_id: streamTenant,
        delivery_mode: 'stream',
        max_concurrency: CONCURRENCY,
      });
      const token = (await api('POST', `/endpoints/${stream.json.id}/stream-tokens`, { name: 'bench' })).json
        .token as string;
      await publishMany(api, streamTenant, MESSAGES);
      const streamStarted = Date.now();
      const reader = readStream(h.origin, stream.json.id, token);
      streamSeconds += await untilSucceeded(h, stream.json.id, MESSAGES, streamStarted);
      ackRequests += reader.stats().ackRequests;
      reader.close();
    }

    console.log('stream: ceiling (raw POSTs, 3 in flight)');
    const ceiling = await rawPostsPerSecond(h.receivers.url('fast', 'stream-ceiling'), 3);
    const streamPerS = (ROUNDS * MESSAGES) / streamSeconds;
    const pushPerS = (ROUNDS * MESSAGES) / pushSeconds;
    return {
      stream: {
        messages: MESSAGES,
        stream_per_s: round(streamPerS),
        push_per_s: round(pushPerS),
        ceiling_per_s: round(ceiling),
        stream_to_push: round(streamPerS / pushPerS, 3),
        stream_to_ceiling: round(streamPerS / ceiling, 3),
        push_to_ceiling: round(pushPerS / ceiling, 3),
        ack_requests: ackRequests,
        deliveries_per_ack: round((ROUNDS * MESSAGES) / Math.max(1, ackRequests), 2),
      },
    };
  } finally {
    await h.stop();
  }
}

export function printStream(figures: StreamFigures): void {
  console.log(
    `\nstream (${figures.messages} deliveries, max_concurrency 3): one stream ${figures.stream_per_s}/s, push ${figures.push_per_s}/s, ` +
      `ceiling ${figures.ceiling_per_s}/s; stream/push ${figures.stream_to_push}, stream/ceiling ${figures.stream_to_ceiling}; ` +
      `${figures.ack_requests} ack requests (${figures.deliveries_per_ack} deliveries each)`,
  );
}
