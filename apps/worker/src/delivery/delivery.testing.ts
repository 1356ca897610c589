import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { expect } from 'vitest';
import { purgeExpiredJob, type LimitName, type OperationalEventType } from '@svc/core';
import { post, startHarness, type Harness, type HarnessOptions } from '../../../server/src/testing/harness.js';
import { startWorker, type RunningWorker } from '../worker.js';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** A real server and a real worker over one test database, with a loopback receiver that follows a script. */
export interface DeliveryStack {
  h: Harness;
  worker: RunningWorker;
  base: string;
  received: Received[];
  /** Per path: the statuses to answer in turn (the last one repeats); default 200. */
  script: Map<string, number[]>;
  /** Per path: milliseconds to wait before answering. */
  delays: Map<string, number>;
  /** Highest number of requests a path had open at once. */
  peakConcurrency: Map<string, number>;
  setup(
    path: string,
    extra?: Record<string, unknown>,
  ): Promise<{ tenantId: string; endpointId: string; secret: string }>;
  publish(tenantId: string, payload?: unknown): Promise<string>;
  messageStatus(id: string): Promise<{ status: string; delivery_counts: Record<string, number> }>;
  until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms?: number): Promise<T>;
  /**
   * Operational events of a type (and resource) once one matches: the feed shows an event only after every older
   * transaction has finished, so it is polled (through the service, sparing the read bucket).
   */
  eventsUntil(
    type: OperationalEventType,
    match: (data: Record<string, unknown>) => boolean,
    resourceId?: string,
  ): Promise<Record<string, unknown>[]>;
  /** Moves the service clock, and the queue's start times with it (pg-boss compares them with the database's now()). */
  advance(ms: number): Promise<void>;
  /** Stops the worker (jobs wait in the queue) until startWorker. */
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  /** Queues the retention maintenance job now (the worker runs it as it would on its schedule). */
  runMaintenance(): Promise<void>;
  close(): Promise<void>;
}

export async function startDeliveryStack(
  limits: Partial<Record<LimitName, number>> = {},
  options: Pick<HarnessOptions, 'consoleUrl' | 'realClock' | 'serverEnv'> & {
    /** The worker schedules the periodic jobs (default true; see WorkerOptions.schedules). */
    schedules?: boolean;
  } = {},
): Promise<DeliveryStack> {
  const { schedules, ...harness } = options;
  const h = await startHarness({ limits, ...harness });
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  const received: Received[] = [];
  const script = new Map<string, number[]>();
  const delays = new Map<string, number>();
  const open = new Map<string, number>();
  const peakConcurrency = new Map<string, number>();
  const receiver = http.createServer((request, response) => {
    const path = request.url ?? '';
    open.set(path, (open.get(path) ?? 0) + 1);
    peakConcurrency.set(path, Math.max(peakConcurrency.get(path) ?? 0, open.get(path)!));
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path, headers: request.headers, body: Buffer.concat(chunks), at: Date.now() });
      const statuses = script.get(path) ?? [200];
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
      setTimeout(
        () => {
          open.set(path, open.get(path)! - 1);
          response.writeHead(status, status === 429 ? { 'retry-after': '120' } : {}).end('ok');
        },
        delays.get(path) ?? 0,
      );
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const launch = () =>
    startWorker({
      databaseUrl: h.databaseUrl,
      services: h.services,
      logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
      maxIdleMs: 100,
      ...(schedules === undefined ? {} : { schedules }),
    });
  let worker: RunningWorker | null = await launch();
  await post(h, '/event_types', { name: 'order.created' });

  const until = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  return {
    h,
    get worker() {
      if (!worker) throw new Error('the worker is stopped');
      return worker;
    },
    base,
    received,
    script,
    delays,
    peakConcurrency,
    until,
    async setup(path, extra = {}) {
      const tenant = await post(h, '/tenants', { external_id: `t-${path.slice(1)}`, name: path });
      const endpoint = await post(h, '/endpoints', { tenant_id: tenant.json.id, url: `${base}${path}`, ...extra });
      expect(endpoint.status, endpoint.text).toBe(201);
      return {
        tenantId: tenant.json.id as string,
        endpointId: endpoint.json.id as string,
        secret: endpoint.json.signing_secret as string,
      };
    },
    async publish(tenantId, payload = {}) {
      const r = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload });
      expect(r.status, r.text).toBe(202);
      return r.json.id as string;
    },
    async eventsUntil(type, match, resourceId) {
      return until(`a ${type} event`, async () => {
        const page = await h.services.events.listEvents(
          { actor: h.team },
          { type, limit: 200, ...(resourceId ? { resource_id: resourceId } : {}) },
        );
        const data = page.data.map((e) => e.data as Record<string, unknown>);
        return data.some(match) ? data : undefined;
      });
    },
    // Through the service, not GET: polling must not drain the read bucket of a clock that stands still.
    async messageStatus(id) {
      return h.services.messages.getMessage({ actor: h.team }, id);
    },
    async advance(ms) {
      h.clock.advance(ms);
      await h.services.db.query(
        `UPDATE pgboss.job SET start_after = start_after - make_interval(secs => $1::float8 / 1000)
          WHERE state IN ('created', 'retry')`,
        [ms],
      );
      worker?.notify();
    },
    async stopWorker() {
      await worker?.stop();
      worker = null;
    },
    async startWorker() {
      worker ??= await launch();
    },
    async runMaintenance() {
      await h.services.db.transaction((tx) => h.services.jobs.send(tx, purgeExpiredJob, [{ payload: {} }]));
      worker?.notify();
    },
    async close() {
      await worker?.stop();
      receiver.close();
      await h.close();
    },
  };
}
