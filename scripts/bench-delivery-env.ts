/**
 * The pieces the delivery benchmark (scripts/bench-delivery.ts) runs against: loopback receivers, the server and
 * worker processes (the production JavaScript the Docker image runs, with scripts/bench-probe.ts preloaded), the
 * load process, readings from /proc, and the teams, tenants, event types and endpoints the scenarios publish to.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { OpenedCore } from '@svc/core';
import type { LoadJob } from './bench-delivery-load.js';
import { buildProduction } from './build.js';
import { ROOT } from './local-runtime.js';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export type ReceiverKind = 'fast' | 'slow' | 'slow9' | 'hang' | 'reject';

/**
 * Loopback receivers on one port: `/fast/<name>` answers 204 at once, `/slow/<name>` after 2 seconds, `/slow9/<name>`
 * after 9 seconds (inside the default 10 s timeout), `/reject/<name>` 400 at once, `/hang/<name>` never (the sender's
 * timeout ends the attempt; counted on arrival). Counts arrivals per name, the requests open at once (and their peak)
 * and, while recording, each message's arrival time by its webhook-id.
 */
export class Receivers {
  readonly counts = new Map<string, number>();
  readonly arrivals = new Map<string, number>();
  /** Per name, the Svc-Sequence numbers that arrived, in arrival order (ordered endpoints). */
  readonly sequences = new Map<string, number[]>();
  recording = false;
  /** Requests open right now, and the most open at once since resetPeak(). */
  open = 0;
  peak = 0;
  private server: http.Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.server = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
      const arrivedAt = Date.now();
      const [, kind, name = ''] = (request.url ?? '').split('/');
      const count = () => this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
      this.open += 1;
      this.peak = Math.max(this.peak, this.open);
      response.once('close', () => (this.open -= 1));
      request.resume();
      if (kind === 'hang') {
        count();
        return;
      }
      request.on('end', () => {
        const answer = () => {
          count();
          const id = request.headers['webhook-id'];
          const sequence = request.headers['svc-sequence'];
          if (typeof sequence === 'string') {
            const seen = this.sequences.get(name) ?? [];
            seen.push(Number(sequence));
            this.sequences.set(name, seen);
          }
          if (this.recording && typeof id === 'string' && !this.arrivals.has(id)) this.arrivals.set(id, arrivedAt);
          response.writeHead(kind === 'reject' ? 400 : 204).end();
        };
        if (kind === 'slow') setTimeout(answer, 2000);
        else if (kind === 'slow9') setTimeout(answer, 9000);
        else answer();
      });
    });
    this.server.maxRequestsPerSocket = 0;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  resetPeak(): void {
    this.peak = this.open;
  }

  url(kind: ReceiverKind, name: string): string {
    return `http://127.0.0.1:${this.port}/${kind}/${name}`;
  }

  /** Arrivals at the receivers whose names pass `which`. */
  total(which: (name: string) => boolean = () => true): number {
    let sum = 0;
    for (const [name, count] of this.counts) if (which(name)) sum += count;
    return sum;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

/**
 * The production JavaScript of this run's sources: dist/server.js and dist/worker.js as `npm run build` makes them
 * for the Docker image (scripts/build.ts), and the probe bundled beside them, so no process under test loads tsx.
 */
export interface ServiceBuild {
  dir: string;
  server: string;
  worker: string;
  probe: string;
  remove(): void;
}

/**
 * Builds into a directory of this run's own: other engineers' `npm run build` empties dist/, and two benchmarks may
 * run at once. It is under node_modules/.cache, inside the repository (the bundles resolve their npm dependencies
 * from node_modules) and outside what the linter and formatter read.
 */
export async function buildServices(): Promise<ServiceBuild> {
  const dir = path.join(ROOT, 'node_modules/.cache/svc-bench', `build-${process.pid}`);
  await buildProduction(dir);
  const probe = path.join(dir, 'bench-probe.js');
  await build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, 'scripts/bench-probe.ts')],
    outfile: probe,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  return {
    dir,
    server: path.join(dir, 'server.js'),
    worker: path.join(dir, 'worker.js'),
    probe,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A server or worker process started by the benchmark (and only ever stopped by its own pid). */
export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  probePort: number;
  output(): string;
}

/** Starts a built entry point as the Docker image does (`node --enable-source-maps dist/<name>.js`), plus the probe. */
export function startService(
  name: string,
  script: string,
  probe: string,
  env: Record<string, string>,
  probePort: number,
): ServiceProcess {
  // BENCH_NODE_FLAGS: more flags for the server and worker processes (`--trace-gc`: their pauses in .tmp/bench-logs/).
  const flags = (process.env['BENCH_NODE_FLAGS'] ?? '').split(' ').filter((flag) => flag !== '');
  const args = [...flags, '--enable-source-maps', '--import', pathToFileURL(probe).href, script];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      // The image's environment (Dockerfile).
      NODE_ENV: 'production',
      ...env,
      BENCH_PROBE_PORT: String(probePort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  mkdirSync(path.join(ROOT, '.tmp/bench-logs'), { recursive: true });
  const log = createWriteStream(path.join(ROOT, `.tmp/bench-logs/${name}.log`));
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
    log.write(chunk);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { name, child, probePort, output: () => tail };
}

export async function stopService(service: ServiceProcess): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Waits until `ready` holds, failing with the process's last output when it exits or the time is up. */
export async function waitFor(what: string, ready: () => Promise<boolean>, service?: ServiceProcess): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (service && service.child.exitCode !== null)
      throw new Error(`${service.name} exited (${service.child.exitCode}):\n${service.output()}`);
    if (await ready().catch(() => false)) return;
    await sleep(250);
  }
  throw new Error(`${what} was not ready in 90 s${service ? `:\n${service.output()}` : ''}`);
}

export interface ProbeStats {
  round_trips: number;
  statements: Record<string, number>;
}

export async function probeStats(service: ServiceProcess): Promise<ProbeStats> {
  const response = await fetch(`http://127.0.0.1:${service.probePort}/stats`);
  return (await response.json()) as ProbeStats;
}

export async function probeProfile(service: ServiceProcess, action: 'start' | 'stop'): Promise<unknown> {
  const response = await fetch(`http://127.0.0.1:${service.probePort}/profile/${action}`, { method: 'POST' });
  return response.json();
}

/** Statement counts between two readings, most frequent first. */
export function statementDelta(before: ProbeStats, after: ProbeStats): [string, number][] {
  return Object.entries(after.statements)
    .map(([key, count]): [string, number] => [key, count - (before.statements[key] ?? 0)])
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1]);
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : 0;
}

/** VmHWM: the most resident memory the process has had, in MB. */
export function peakRssMb(pid: number): number {
  return statusMb(pid, 'VmHWM');
}

/** VmRSS: resident memory now, in MB. */
export function rssMb(pid: number): number {
  return statusMb(pid, 'VmRSS');
}

const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of one process. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU seconds of the postmaster and each of its children (backends, autovacuum, writers), by pid. */
export function postgresCpu(dataDir: string): Map<number, number> {
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const cpu = new Map([[postmaster, cpuSeconds(postmaster)]]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === postmaster) cpu.set(Number(entry), cpuSeconds(Number(entry)));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return cpu;
}

/**
 * CPU used between two readings: processes alive at the second count from their first reading (or from zero when
 * they started since); a backend that ended in between is missed, so short-lived connections undercount slightly.
 */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += Math.max(0, seconds - (before.get(pid) ?? 0));
  return total;
}

/** Runs scripts/bench-delivery-load.ts in its own process and returns what it printed. */
/**
 * How long after its launch a load process starts sending. Launching one (Node, tsx, undici) takes about 0.45 s of
 * CPU alone; fairness's hot_team launches three or four at once on 2 cores, and with 0.5 s of margin the other
 * team's process was still booting while Y's first requests went out: its start-up was counted as the service's.
 */
const LOAD_START_MS = 2_000;

/** The `startAt` of a load job launched now (and `laterMs` more). */
export function loadStartAt(laterMs = 0): number {
  return Date.now() + LOAD_START_MS + laterMs;
}

export function runLoad<R>(job: LoadJob): Promise<R> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'scripts/bench-delivery-load.ts'), JSON.stringify(job)],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(stderr || error.message)) : resolve(JSON.parse(stdout) as R),
    );
  });
}

/** One team publishing: its key, its one tenant and event type, and its endpoints by receiver name. */
export interface BenchTeam {
  teamId: string;
  authorization: string;
  tenantId: string;
  eventType: string;
  endpoints: { id: string; receiver: string }[];
}

async function api(
  origin: string,
  authorization: string,
  method: string,
  route: string,
  body?: unknown,
  etag?: string,
): Promise<{ id: string; etag: string }> {
  const response = await fetch(`${origin}/v1${route}`, {
    method,
    headers: {
      authorization,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(method === 'POST' ? { 'idempotency-key': `setup-${Math.random().toString(36).slice(2)}` } : {}),
      ...(etag ? { 'if-match': etag } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${text}`);
  return { id: text ? (JSON.parse(text) as { id: string }).id : '', etag: response.headers.get('etag') ?? '' };
}

/**
 * Teams with a payment card and a key (through the services, as the admin CLI does), each with one tenant, one
 * event type and `fanout` endpoints created through the REST API of the server process.
 */
export async function createTeams(
  core: OpenedCore,
  origin: string,
  receivers: Receivers,
  prefix: string,
  count: number,
  fanout: number,
): Promise<BenchTeam[]> {
  const { teams } = core.services;
  return Promise.all(
    Array.from({ length: count }, async (_, t) => {
      const team = await teams.createTeam(`${prefix}-${t}`);
      await teams.setPaymentCard(team.id, true);
      const authorization = `Bearer ${(await teams.createKey(team.id)).secret}`;
      const tenant = await api(origin, authorization, 'POST', '/tenants', {
        external_id: `${prefix}-${t}`,
        name: prefix,
      });
      const eventType = 'bench.event';
      await api(origin, authorization, 'POST', '/event_types', { name: eventType });
      const endpoints: BenchTeam['endpoints'] = [];
      for (let e = 0; e < fanout; e += 1) {
        const receiver = `${prefix}-${t}-${e}`;
        endpoints.push({
          id: (await addEndpoint(origin, authorization, tenant.id, receivers.url('fast', receiver))).id,
          receiver,
        });
      }
      return { teamId: team.id, authorization, tenantId: tenant.id, eventType, endpoints };
    }),
  );
}

/** An endpoint with the default timeout (10 s): a receiver that never answers holds an attempt that long. */
export function addEndpoint(origin: string, authorization: string, tenantId: string, url: string) {
  return api(origin, authorization, 'POST', '/endpoints', {
    tenant_id: tenantId,
    url,
    events: ['bench.event'],
    rate_per_second: 1000,
    max_concurrency: 3,
    timeout_seconds: 10,
  });
}

export function updateEndpoint(
  origin: string,
  authorization: string,
  endpoint: { id: string; etag: string },
  change: Record<string, unknown>,
) {
  return api(origin, authorization, 'PATCH', `/endpoints/${endpoint.id}`, change, endpoint.etag);
}

export function deleteEndpoint(origin: string, authorization: string, endpoint: { id: string; etag: string }) {
  return api(origin, authorization, 'DELETE', `/endpoints/${endpoint.id}`, undefined, endpoint.etag);
}
