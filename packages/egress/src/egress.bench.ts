// Throughput micro-benchmark for the delivery client, for `npm run bench` to call. It posts to one URL with a
// fixed number of requests in flight for a fixed time and reports posts per second. `via: 'raw'` uses a plain
// undici Agent (the ceiling: the same HTTP stack without checks); `via: 'egress'` goes through
// createEgressClient (pinned connector, deadline, capped body), so the two give a ratio on the same machine.
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { createEgressClient } from './egress-client.js';
import type { UrlPolicy } from './host-policy.js';

export interface PostBenchOptions {
  readonly url: string;
  readonly seconds: number;
  readonly concurrency: number;
  readonly via?: 'raw' | 'egress';
  /** Request body; 256 bytes of JSON by default. */
  readonly body?: Buffer;
  /** For `via: 'egress'`; loopback receivers need allowLoopback. */
  readonly policy?: UrlPolicy;
  /** Per request, for `via: 'egress'`. Default 10,000 ms. */
  readonly timeoutMs?: number;
}

export interface PostBenchResult {
  readonly via: 'raw' | 'egress';
  readonly concurrency: number;
  readonly seconds: number;
  /** Requests answered with a 2xx. */
  readonly ok: number;
  /** Other statuses and failures. */
  readonly failed: number;
  readonly postsPerSecond: number;
  /** Latency of answered requests, ms. */
  readonly p50Ms: number;
  readonly p99Ms: number;
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
}

function defaultBody(): Buffer {
  const padding = 'x'.repeat(200);
  return Buffer.from(JSON.stringify({ type: 'bench.event', id: 'evt_bench', data: { padding } }));
}

type Post = () => Promise<boolean>;

function rawPoster(url: URL, body: Buffer, agent: Agent): Post {
  const path = `${url.pathname}${url.search}`;
  return async () => {
    const response = await agent.request({
      origin: url.origin,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await response.body.dump();
    return response.statusCode >= 200 && response.statusCode < 300;
  };
}

/** Posts to `url` for `seconds` with `concurrency` requests in flight and reports the rate. */
export async function measurePostsPerSecond(options: PostBenchOptions): Promise<PostBenchResult> {
  const via = options.via ?? 'raw';
  const url = new URL(options.url);
  const body = options.body ?? defaultBody();
  const connections = Math.max(1, options.concurrency);
  const agent = new Agent({ connections, pipelining: 1 });
  const egress = createEgressClient({
    policy: options.policy ?? { allowLoopback: true, serviceHosts: [] },
    maxSocketsPerOrigin: connections,
  });
  const post: Post =
    via === 'raw'
      ? rawPoster(url, body, agent)
      : async () => {
          const outcome = await egress.post({
            url: options.url,
            headers: { 'content-type': 'application/json' },
            body,
            timeoutMs: options.timeoutMs ?? 10_000,
          });
          return outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300;
        };

  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  const started = performance.now();
  const endAt = started + options.seconds * 1000;
  const loop = async () => {
    while (performance.now() < endAt) {
      const sent = performance.now();
      const succeeded = await post().catch(() => false);
      if (succeeded) {
        ok += 1;
        latencies.push(performance.now() - sent);
      } else {
        failed += 1;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, loop));
  } finally {
    await Promise.all([agent.close(), egress.close()]);
  }
  const elapsedSeconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    via,
    concurrency: connections,
    seconds: Math.round(elapsedSeconds * 100) / 100,
    ok,
    failed,
    postsPerSecond: Math.round(ok / elapsedSeconds),
    p50Ms: Math.round(percentile(latencies, 0.5) * 100) / 100,
    p99Ms: Math.round(percentile(latencies, 0.99) * 100) / 100,
  };
}
