/**
 * What the worst unauthenticated GraphQL documents cost the server (issue 27): the production server bundle (as the
 * Docker image runs it, at its default log level) on an embedded Postgres, no key sent.
 *
 *   npx tsx scripts/bench-graphql-hostile.ts            documents up to 1,040,000 bytes (just under the 1 MiB body)
 *   BENCH_DOCUMENT_BYTES=65536 npx tsx scripts/...      smaller documents
 *
 * For each document of apps/server/src/testing/hostile-graphql.ts (the worst ones of any size, then the worst ones
 * that pass the document limits): the answer (status, code, message), the server's
 * CPU per request (user + system from /proc/<pid>/stat over sequential requests), then 8 clients sending it at once
 * for BENCH_SECONDS (default 4) while one more client asks /healthz every 100 ms: requests answered and /healthz
 * latency (median and worst). Figures go to .tmp/bench-graphql-hostile.json too.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ensureDatabase, runMigrations, startEmbeddedPostgres } from '@svc/db';
import { documentsAtTheLimits, hostileDocuments } from '../apps/server/src/testing/hostile-graphql.js';
import {
  buildServices,
  cpuSeconds,
  freePort,
  startService,
  stopService,
  waitFor,
  type ServiceBuild,
  type ServiceProcess,
} from './bench-delivery-env.js';
import { ROOT } from './local-runtime.js';

const DOCUMENT_BYTES = Number(process.env['BENCH_DOCUMENT_BYTES'] ?? 1_040_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 4);
const CLIENTS = 8;
const ONE_ADDRESS = process.env['BENCH_ONE_ADDRESS'] === '1';

interface Answer {
  status: number;
  code: string;
  message: string;
}

interface Figures {
  document: string;
  bytes: number;
  answer: Answer;
  cpu_ms_per_request: number;
  concurrent_requests_per_s: number;
  healthz_p50_ms: number;
  healthz_max_ms: number;
}

let sent = 0;

/** POSTs over a connection from `localAddress`; answers the status and the body's text. */
function post(origin: string, localAddress: string, body: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: hostname,
        port,
        localAddress,
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, text: Buffer.concat(chunks).toString() }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * POSTs the document with a comment of its own at the end: Apollo keeps the documents it validated (by their hash),
 * so a client that wants to cost something sends a new one each time. Each request comes from the next of 254
 * loopback addresses (as from as many clients): one address alone is soon refused by its unauthenticated GraphQL
 * limit, which is not what this measures (BENCH_ONE_ADDRESS=1 sends all from 127.0.0.1 instead).
 */
async function send(origin: string, query: string): Promise<Answer> {
  sent += 1;
  const from = ONE_ADDRESS ? '127.0.0.1' : `127.0.1.${(sent % 254) + 1}`;
  const response = await post(origin, from, JSON.stringify({ query: `${query}\n#${sent}` }));
  const text = response.text;
  let first: { message?: string; extensions?: { code?: string } } = {};
  try {
    first = (JSON.parse(text) as { errors?: (typeof first)[] }).errors?.at(-1) ?? {};
  } catch {
    first = { message: text.slice(0, 80) };
  }
  return {
    status: response.status,
    code: first.extensions?.code ?? '',
    message: (first.message ?? '').slice(0, 100),
  };
}

/** CPU ms per request over sequential requests: at least 20 requests and 1.5 s (the /proc clock ticks in 10 ms). */
async function cpuPerRequest(origin: string, server: ServiceProcess, query: string): Promise<number> {
  const pid = server.child.pid!;
  const before = cpuSeconds(pid);
  const started = Date.now();
  let count = 0;
  while (count < 20 || Date.now() - started < 1_500) {
    await send(origin, query);
    count += 1;
  }
  return ((cpuSeconds(pid) - before) * 1000) / count;
}

/**
 * /healthz latencies, one request every 100 ms until `stopAt`, from a thread of its own: the clients' event loop
 * (building 1 MiB bodies) must not delay the probe.
 */
function probeHealth(origin: string, stopAt: number): Promise<number[]> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const latencies = [];
      await new Promise((r) => setTimeout(r, 100));
      while (Date.now() < workerData.stopAt) {
        const started = performance.now();
        await fetch(workerData.origin + '/healthz');
        latencies.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 100));
      }
      parentPort.postMessage(latencies);
    })();
  `;
  const worker = new Worker(source, { eval: true, workerData: { origin, stopAt } });
  return new Promise((resolve, reject) => {
    worker.once('message', (latencies: number[]) => resolve(latencies));
    worker.once('error', reject);
  });
}

async function underLoad(origin: string, query: string) {
  const stopAt = Date.now() + SECONDS * 1000;
  let answered = 0;
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (Date.now() < stopAt) {
      await send(origin, query);
      answered += 1;
    }
  });
  const started = Date.now();
  const [latencies] = await Promise.all([probeHealth(origin, stopAt), ...clients]);
  latencies.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    concurrent_requests_per_s: round(answered / ((Date.now() - started) / 1000)),
    healthz_p50_ms: round(latencies[Math.floor(latencies.length / 2)] ?? 0),
    healthz_max_ms: round(latencies.at(-1) ?? 0),
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-graphql-pg-'));
  const cluster = await startEmbeddedPostgres({ dataDir, persistent: false });
  const databaseUrl = cluster.url.replace(/\/postgres$/, '/bench_graphql');
  let server: ServiceProcess | null = null;
  let services: ServiceBuild | null = null;
  try {
    services = await buildServices();
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
    const port = await freePort();
    server = startService(
      'server',
      services.server,
      services.probe,
      {
        DATABASE_URL: databaseUrl,
        SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        SVC_PUBLIC_BASE_URL: 'http://webhooks.bench.test',
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      await freePort(),
    );
    const origin = `http://127.0.0.1:${port}`;
    await waitFor('server', async () => (await fetch(`${origin}/readyz`)).ok, server);
    const figures: Figures[] = [];
    for (const document of [...hostileDocuments(DOCUMENT_BYTES), ...documentsAtTheLimits()]) {
      const answer = await send(origin, document.query);
      const cpu = await cpuPerRequest(origin, server, document.query);
      const load = await underLoad(origin, document.query);
      const row: Figures = {
        document: document.name,
        bytes: Buffer.byteLength(document.query),
        answer,
        cpu_ms_per_request: Math.round(cpu * 10) / 10,
        ...load,
      };
      figures.push(row);
      console.log(
        `${row.document} (${row.bytes} bytes): ${answer.status} ${answer.code} "${answer.message}"; ` +
          `${row.cpu_ms_per_request} CPU ms/request; 8 at once: ${row.concurrent_requests_per_s}/s, ` +
          `/healthz p50 ${row.healthz_p50_ms} ms, max ${row.healthz_max_ms} ms`,
      );
    }
    mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    writeFileSync(
      path.join(ROOT, '.tmp/bench-graphql-hostile.json'),
      JSON.stringify({ document_bytes: DOCUMENT_BYTES, seconds: SECONDS, figures }, null, 2),
    );
  } finally {
    if (server) await stopService(server);
    services?.remove();
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
