/**
 * The tracing figure of `npm run bench` (docs/benchmarks.md, docs/operations.md "Tracing"): what tracing costs the
 * server per admitted message. The server runs in this process over its own embedded Postgres; the load comes from
 * the delivery benchmark's load process (POST /v1/messages, 8 teams x 2 in flight, closed loop, fan-out 1, no
 * worker). After a warm-up load, tracing off and on alternate twice (BENCH_SECONDS each), so that a drift of the
 * machine's load falls on both alike; each figure is the mean of its two windows. Measured in one run:
 *
 *   off     CPU of this process per admitted message with tracing off (no SDK registered: the API's no-ops)
 *   on      the same with the SDK registered, batching spans to an in-process exporter that drops them
 *           (what an OTLP exporter costs beyond that, serialising and sending, is not in it)
 *   no-op   the span API calls one message makes on the server and in the worker, timed alone with no SDK
 *
 * `off` is the ceiling both are read against: on / off is what switching tracing on costs, no-op / off the share
 * of a message's CPU the no-op calls take when tracing is off.
 */
import { ROOT_CONTEXT, propagation, trace, type Span } from '@opentelemetry/api';
import pino from 'pino';
import {
  contextOf,
  limitsWith,
  linksTo,
  loadTracingSdk,
  openCore,
  systemClock,
  testCoreOptions,
  traceparentOf,
  tracer,
  type Services,
} from '@svc/core';
import { buildApp, readServerConfig } from '@svc/server';
import { runLoad } from './bench-delivery-env.js';
import type { PublishResult, PublishTeam } from './bench-delivery-load.js';
import { createBenchEndpoint, startBenchDatabase } from './bench-setup.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const TEAMS = 8;
const PER_TEAM = 2;

export interface TracingFigures {
  seconds: number;
  admitted_per_s: { off: number; on: number };
  /** CPU of the server process per admitted message, microseconds. */
  cpu_us_per_message: { off: number; on: number };
  /** on / off: what switching tracing on costs (1 would be nothing). */
  on_to_off: number;
  /** The span API calls of one message (server and worker) with no SDK, microseconds. */
  noop_us_per_message: number;
  /** noop / off: the share of a message's server CPU the no-op calls take. */
  noop_share: number;
  spans_exported_on: number;
}

interface Phase {
  admitted_per_s: number;
  cpu_us_per_message: number;
}

/** One load run: messages admitted per second and this process's CPU per admitted message. */
async function measure(origin: string, teams: PublishTeam[], seconds = SECONDS): Promise<Phase> {
  const cpu = process.cpuUsage();
  const load = await runLoad<PublishResult>({
    kind: 'publish',
    origin,
    teams,
    perTeam: PER_TEAM,
    startAt: Date.now() + 1000,
    durationMs: seconds * 1000,
  });
  const used = process.cpuUsage(cpu);
  if (load.admitted === 0) throw new Error(`no message admitted: ${load.first_error ?? JSON.stringify(load.rejected)}`);
  return {
    admitted_per_s: Math.round(load.admitted / (load.elapsed_ms / 1000)),
    // The load process starts a second before its window: this process idles then.
    cpu_us_per_message: round((used.user + used.system) / load.admitted),
  };
}

async function benchTeams(services: Services, origin: string): Promise<PublishTeam[]> {
  const teams: PublishTeam[] = [];
  for (let t = 0; t < TEAMS; t += 1) {
    const team = await services.teams.createTeam(`bench-tracing-${t}`);
    await services.teams.setPaymentCard(team.id, true);
    const { secret } = await services.teams.createKey(team.id);
    const ctx = { actor: { teamId: team.id, keyId: 'key_bench' } };
    const { tenantId } = await createBenchEndpoint(services, ctx);
    const response = await fetch(`${origin}/v1/event_types`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': 'et' },
      body: '{"name":"bench.traced"}',
    });
    if (response.status !== 201) throw new Error(`POST /event_types: ${response.status} ${await response.text()}`);
    teams.push({ authorization: `Bearer ${secret}`, tenantId, eventType: 'bench.traced' });
  }
  return teams;
}

/**
 * The span API calls one message makes with tracing off, in the order the code makes them: the request span
 * (extract, start, context), the admission span and its traceparent, a share of the batch span, then in the worker
 * the job, attempt and settle spans and a share of the claim and settlement batch spans.
 */
function noopCallsOfOneMessage(headers: Record<string, string>): void {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const request = tracer().startSpan('POST /v1/messages', {}, parent);
  if (request.isRecording()) throw new Error('tracing is on');
  trace.setSpan(parent, request);
  const admission = tracer().startSpan('admission');
  traceparentOf(admission);
  const batch = tracer().startSpan('admission.batch', { root: true, links: linksTo([admission.spanContext()]) });
  for (const span of [admission, batch, request]) endRecorded(span);
  const jobParent = contextOf(traceparentOf(admission));
  const claim = tracer().startSpan('delivery.claim', { root: true });
  const job = tracer().startSpan('delivery.job', { links: linksTo([claim.spanContext()]) }, jobParent);
  const jobContext = trace.setSpan(jobParent, job);
  const attempt = tracer().startSpan('delivery.attempt', {}, jobContext);
  const settle = tracer().startSpan('delivery.settle', {}, jobContext);
  const settleBatch = tracer().startSpan('delivery.settle_batch', {
    root: true,
    links: linksTo([settle.spanContext()]),
  });
  for (const span of [claim, attempt, settleBatch, settle, job]) endRecorded(span);
}

function endRecorded(span: Span): void {
  if (span.isRecording()) span.setAttribute('never', 'set');
  span.end();
}

/** Microseconds per call of `work`: the median of 20 rounds of 10,000 calls. */
function microsecondsPerCall(work: () => void): number {
  const rounds: number[] = [];
  for (let round = 0; round < 20; round += 1) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < 10_000; i += 1) work();
    rounds.push(Number(process.hrtime.bigint() - started) / 1e3 / 10_000);
  }
  rounds.sort((a, b) => a - b);
  return round(rounds[10]!, 3);
}

function mean(phases: Phase[]): Phase {
  const average = (pick: (phase: Phase) => number) => phases.reduce((sum, p) => sum + pick(p), 0) / phases.length;
  return {
    admitted_per_s: Math.round(average((p) => p.admitted_per_s)),
    cpu_us_per_message: round(average((p) => p.cpu_us_per_message)),
  };
}

function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export async function runTracingBench(): Promise<{ tracing: TracingFigures }> {
  const { databaseUrl, stop } = await startBenchDatabase('tracing');
  try {
    const core = await openCore(
      testCoreOptions(databaseUrl, systemClock, {
        poolSize: 10,
        limits: limitsWith({ max_pending_deliveries: 1_000_000_000, max_content_bytes: 1_000_000_000_000 }),
      }),
    );
    const { services } = core;
    const config = { ...readServerConfig({ PORT: '0', LOG_LEVEL: 'silent' }, 'local'), limits: services.limits };
    // The write bucket would cap the figure at the configured rate; the benchmark measures the request itself.
    services.rateLimits.take = async () => undefined;
    const { app } = await buildApp(services, config, pino({ level: 'silent' }));
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });
    const teams = await benchTeams(services, origin);

    const noop = microsecondsPerCall(() => noopCallsOfOneMessage({ traceparent: '' }));
    const sdk = await loadTracingSdk();
    let exported = 0;
    const measureOn = async () => {
      const tracing = sdk.startTracing({
        serviceName: 'svc-webhooks-bench',
        exporter: {
          export(spans, done) {
            exported += spans.length;
            done({ code: 0 });
          },
          shutdown: async () => undefined,
        },
      });
      try {
        return await measure(origin, teams);
      } finally {
        await tracing.shutdown();
      }
    };
    // Warm-up: the JIT, the prepared statements and the caches of a first load are not what either side costs.
    await measure(origin, teams, 2);
    const windows = { off: [await measure(origin, teams)], on: [await measureOn()] };
    windows.off.push(await measure(origin, teams));
    windows.on.push(await measureOn());
    const off = mean(windows.off);
    const on = mean(windows.on);
    await app.close();
    await core.close();
    return {
      tracing: {
        seconds: SECONDS,
        admitted_per_s: { off: off.admitted_per_s, on: on.admitted_per_s },
        cpu_us_per_message: { off: off.cpu_us_per_message, on: on.cpu_us_per_message },
        on_to_off: round(on.cpu_us_per_message / off.cpu_us_per_message, 3),
        noop_us_per_message: noop,
        noop_share: round(noop / off.cpu_us_per_message, 5),
        spans_exported_on: exported,
      },
    };
  } finally {
    await stop();
  }
}

export function printTracing(t: TracingFigures): void {
  const line = (name: string, value: string, note = '') =>
    console.log(`${name.padEnd(52)}${value.padStart(10)}  ${note}`);
  console.log(
    `\ntracing (POST /v1/messages, ${TEAMS} teams x ${PER_TEAM} in flight, no worker; off and on alternate, 2 x ${t.seconds} s each)`,
  );
  line(
    'server CPU per message, tracing off (the ceiling)',
    `${t.cpu_us_per_message.off} us`,
    `${t.admitted_per_s.off}/s`,
  );
  line(
    'server CPU per message, tracing on (in-process exporter)',
    `${t.cpu_us_per_message.on} us`,
    `${t.admitted_per_s.on}/s, on/off ${t.on_to_off}, ${t.spans_exported_on} spans`,
  );
  line(
    'span API calls of one message, no SDK (no-op)',
    `${t.noop_us_per_message} us`,
    `share of off ${(t.noop_share * 100).toFixed(3)}%`,
  );
}
