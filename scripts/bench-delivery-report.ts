/**
 * What the delivery benchmark (scripts/bench-delivery.ts) writes to `delivery` in .tmp/bench.json, and the table it
 * prints: every figure with its target and its same-run ceiling or ratio. docs/benchmarks.md explains each field.
 */
import { availableParallelism } from 'node:os';

type CpuBreakdown = { server: number; worker: number; postgres: number; total: number };

export interface DeliveryFigures {
  fanout1: {
    admitted_per_s: number;
    delivered_per_s: number;
    rejected: number;
    drain_s: number;
    cpu_ms_per_message: CpuBreakdown;
  };
  fanout10: { admitted_per_s: number; deliveries_per_s: number };
  latency_at_500: {
    p50_ms: number;
    p90_ms?: number;
    p99_ms: number;
    /** Each second of the window's p99: a stall shows as one or two seconds far above the rest. */
    p99_by_second_ms?: number[];
    /** The five slowest deliveries, with the second of the window they were accepted in. */
    slowest?: { ms: number; at_s: number; claimed_after_ms?: number; post_ms?: number }[];
    admitted_per_s: number;
    undelivered: number;
  };
  slow_endpoint: { fast_pace_ratio: number; fast_deliveries_per_s: number; slow_deliveries: number };
  dead_endpoint: {
    fast_pace_ratio: number;
    fast_deliveries_per_s: number;
    /** Worker CPU ms per second in (e) minus the same in (b). */
    worker_cpu_ms_per_s: number;
    worker_cpu_ms_per_s_without: number;
    worker_cpu_ms_per_s_with: number;
    /** Postgres CPU ms per second in (e) minus the same in (b). */
    postgres_cpu_ms_per_s: number;
    queued: number;
    /** Requests that reached the dead receiver during (e) (its circuit is open: none expected). */
    attempts: number;
  };
  backlog: {
    cost_ratio: number;
    size: number;
    setup_s: number;
    cpu_ms_per_message_without: number;
    cpu_ms_per_message_with: number;
    admitted_per_s_with: number;
    delivered_per_s_with: number;
  };
  scale: { workers3: { deliveries_per_s: number; admitted_per_s: number; ratio_to_one_worker: number } };
  /** One ordered endpoint answering at once, draining a queue one delivery at a time. */
  ordered: {
    deliveries_per_s: number;
    queued: number;
    /** Raw undici POSTs/s to the same receiver, one at a time (what one-at-a-time delivery can reach over HTTP). */
    posts_one_at_a_time_per_s: number;
    /** Single-row INSERT commits/s on one connection. */
    commits_one_at_a_time_per_s: number;
    /** One POST and one commit in turn: 1 / (1 / posts + 1 / commits). */
    ceiling_per_s: number;
    in_order: boolean;
  };
  durable: {
    fanout1: { admitted_per_s: number; delivered_per_s: number; cpu_ms_per_message: CpuBreakdown };
    ceiling: { commits_per_s: number };
  };
  peak_rss_mb: { server: number; worker: number };
  round_trips_per_message: number;
  round_trips_per_delivery: number;
  ceiling: { commits_per_s: number; posts_per_s: number };
}

/** What the run saw beside the figures, for the lines under the table. */
export interface RunDetails {
  scenarios: string[];
  ceilings: { first: { commits: number; posts: number }; last: { commits: number; posts: number } };
  rss: string[];
  fanout1?: {
    requestP50: number;
    requestP99: number;
    drainS: number;
    serverStatements: [string, number][];
    workerStatements: [string, number][];
    postgresTime: [string, number, number][];
    withBacklog?: { cpu: CpuBreakdown; postgresTime: [string, number, number][] };
  };
  fanout10?: {
    b: Fanout10Summary;
    c?: Fanout10Summary;
    e?: Fanout10Summary;
    slowDeliveries: number;
  };
  scale?: { workerCpuMsPerS: number; workerRoundTripsPerFastDelivery: number };
  durable?: {
    settings: string;
    first: number;
    last: number;
    peakRss: { server: number; worker: number };
  };
  profiles: string[];
}

export interface Fanout10Summary {
  admittedPerS: number;
  fastPerS: number;
  workerRoundTripsPerFastDelivery: number;
  workerCpuMsPerS: number;
  postgresCpuMsPerS: number;
  /** Worker statements per fast delivery, by statement. */
  workerStatements: Map<string, number>;
  /** Postgres execution ms and calls per fast delivery by statement (pg_stat_statements, when preloaded). */
  postgresTime: [string, number, number][];
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const signed = (value: number) => `${value >= 0 ? '+' : ''}${round(value)}`;

/** The table and the lines under it. Groups absent from `f` were not run (BENCH_SCENARIOS) and print nothing. */
export function formatDeliveryReport(f: Partial<DeliveryFigures>, d: RunDetails): string[] {
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const row = (name: string, value: string, target: string, ratio: string) =>
    log(`${name.padEnd(48)}${value.padStart(12)}  ${target.padEnd(12)}${ratio}`);
  const ceiling = f.ceiling!;
  const ofCommits = (v: number) => `${(v / ceiling.commits_per_s).toFixed(3)} of commits/s`;
  const ofPosts = (v: number) => `${(v / ceiling.posts_per_s).toFixed(3)} of posts/s`;
  const cores = availableParallelism();

  log(`\ndelivery scenarios run: ${d.scenarios.join(', ')}`);
  log('delivery figure                                        value  target      vs ceiling');
  if (f.fanout1) {
    const cpu = f.fanout1.cpu_ms_per_message;
    row(
      '(a) fan-out 1: messages admitted/s',
      f.fanout1.admitted_per_s.toFixed(1),
      '>= 1000',
      ofCommits(f.fanout1.admitted_per_s),
    );
    row(
      '(a) fan-out 1: deliveries completed/s',
      f.fanout1.delivered_per_s.toFixed(1),
      '>= 1000',
      ofPosts(f.fanout1.delivered_per_s),
    );
    row(
      '(a) CPU ms per message, server+worker+Postgres',
      cpu.total.toFixed(2),
      '<= 1.0',
      `server ${cpu.server}, worker ${cpu.worker}, Postgres ${cpu.postgres}; ${cores} cores allow ${Math.round((cores * 1000) / Math.max(1e-9, cpu.total))}/s`,
    );
  }
  if (f.fanout10)
    row(
      '(b) fan-out 10: deliveries completed/s',
      f.fanout10.deliveries_per_s.toFixed(1),
      '>= 2000',
      ofPosts(f.fanout10.deliveries_per_s),
    );
  const b = d.fanout10?.b;
  if (b && b.fastPerS > 0) {
    // Issue 26's figure: what a delivery costs the worker and Postgres together (admission is the server's).
    const worker = b.workerCpuMsPerS / b.fastPerS;
    const postgres = b.postgresCpuMsPerS / b.fastPerS;
    row(
      '(b) CPU ms per delivery, worker+Postgres',
      (worker + postgres).toFixed(3),
      '<= 0.35',
      `worker ${worker.toFixed(3)}, Postgres ${postgres.toFixed(3)} (Postgres's includes admission's statements)`,
    );
  }
  if (f.latency_at_500) {
    const l = f.latency_at_500;
    row(`accept-to-receiver p50 at 500/s offered (${l.admitted_per_s}/s got)`, `${l.p50_ms} ms`, '', '');
    row(
      'accept-to-receiver p99 at 500/s offered',
      `${l.p99_ms} ms`,
      '<= 100 ms',
      [
        l.undelivered ? `${l.undelivered} undelivered after 60 s` : '',
        l.p90_ms === undefined ? '' : `p90 ${l.p90_ms} ms`,
        l.p99_by_second_ms ? `p99 by second ${l.p99_by_second_ms.join(' ')}` : '',
        l.slowest
          ? `slowest ${l.slowest
              .map(
                (t) =>
                  `${t.ms} ms at ${t.at_s} s (attempt started after ${t.claimed_after_ms} ms, POST ${t.post_ms} ms)`,
              )
              .join(', ')}`
          : '',
      ]
        .filter((part) => part !== '')
        .join('; '),
    );
  }
  if (f.slow_endpoint)
    row(
      '(c) fast endpoints pace with a 2 s endpoint / (b)',
      f.slow_endpoint.fast_pace_ratio.toFixed(3),
      '>= 0.9',
      `${f.slow_endpoint.fast_deliveries_per_s}/s`,
    );
  if (f.dead_endpoint) {
    const e = f.dead_endpoint;
    row(
      `(e) fast pace, dead endpoint ${e.queued.toLocaleString('en')} queued / (b)`,
      e.fast_pace_ratio.toFixed(3),
      '>= 0.9',
      `${e.fast_deliveries_per_s}/s; ${e.attempts} requests reached the dead receiver`,
    );
    row(
      '(e) worker CPU ms/s over (b)',
      e.worker_cpu_ms_per_s.toFixed(1),
      '<= 50',
      `${e.worker_cpu_ms_per_s_with} - ${e.worker_cpu_ms_per_s_without} ms/s; Postgres ${signed(e.postgres_cpu_ms_per_s)} ms/s`,
    );
  }
  if (f.backlog) {
    const b = f.backlog;
    row(
      `(d) cost with ${b.size.toLocaleString('en')} pending / without`,
      b.cost_ratio.toFixed(3),
      '<= 1.2',
      `CPU ms/message ${b.cpu_ms_per_message_without} -> ${b.cpu_ms_per_message_with}`,
    );
    row('(d) with backlog: admitted/s, delivered/s', `${b.admitted_per_s_with}, ${b.delivered_per_s_with}`, '', '');
  }
  if (f.scale) {
    const s = f.scale.workers3;
    row(
      'scale: (b) with 3 workers, deliveries/s',
      s.deliveries_per_s.toFixed(1),
      'reported',
      `${s.ratio_to_one_worker.toFixed(3)} of 1 worker; ${ofPosts(s.deliveries_per_s)}`,
    );
  }
  if (f.ordered) {
    const o = f.ordered;
    row(
      `ordered endpoint: deliveries/s (${o.queued.toLocaleString('en')} queued)`,
      o.deliveries_per_s.toFixed(1),
      '>= 0.5 ceil',
      `${(o.deliveries_per_s / o.ceiling_per_s).toFixed(3)} of a POST + a commit in turn (${o.ceiling_per_s}/s: ` +
        `${o.posts_one_at_a_time_per_s} POSTs/s, ${o.commits_one_at_a_time_per_s} commits/s one at a time)` +
        (o.in_order ? '' : '; OUT OF ORDER'),
    );
  }
  if (f.durable) {
    const a = f.durable.fanout1;
    const commits = f.durable.ceiling.commits_per_s;
    row(
      'durable (a), fsync on: messages admitted/s',
      a.admitted_per_s.toFixed(1),
      '>= 0.9 (a)',
      (f.fanout1 ? `${(a.admitted_per_s / f.fanout1.admitted_per_s).toFixed(3)} of (a); ` : '') +
        `${(a.admitted_per_s / commits).toFixed(3)} of fsync-on commits/s`,
    );
    row(
      'durable (a), fsync on: deliveries completed/s',
      a.delivered_per_s.toFixed(1),
      '',
      `CPU ms/message ${a.cpu_ms_per_message.total}`,
    );
    row(
      'durable ceiling: single-row commits/s (fsync on)',
      commits.toFixed(1),
      '',
      `${(commits / ceiling.commits_per_s).toFixed(3)} of the fsync-off ceiling`,
    );
  }
  if (f.fanout1) {
    row('Postgres round trips per admitted message', String(f.round_trips_per_message), '', 'server process');
    row('Postgres round trips per delivery', String(f.round_trips_per_delivery), '', 'worker process');
  }
  if (f.peak_rss_mb)
    row('peak RSS server / worker (MB), built JS', `${f.peak_rss_mb.server} / ${f.peak_rss_mb.worker}`, '<= 300', '');
  const { first, last } = d.ceilings;
  row(
    'ceiling: single-row commits/s (pool 10)',
    ceiling.commits_per_s.toFixed(1),
    '',
    `first ${round(first.commits)}, last ${round(last.commits)}`,
  );
  row(
    'ceiling: raw undici POSTs/s to the receiver',
    ceiling.posts_per_s.toFixed(1),
    '',
    `first ${round(first.posts)}, last ${round(last.posts)}`,
  );
  log(`RSS MB server/worker after each phase: ${d.rss.join(', ')}`);

  if (d.fanout1) {
    const a = d.fanout1;
    log(
      `\n(a) POST /v1/messages p50 ${a.requestP50} ms, p99 ${a.requestP99} ms; drained ${round(a.drainS)} s after the load`,
    );
    const cpuLine = (label: string, cpu: CpuBreakdown) =>
      log(
        `(a/d) CPU ms per message ${label} the backlog: server ${round(cpu.server, 2)}, worker ${round(cpu.worker, 2)}, Postgres ${round(cpu.postgres, 2)}, in all ${round(cpu.total, 2)}`,
      );
    if (f.fanout1) cpuLine('without', f.fanout1.cpu_ms_per_message);
    if (a.withBacklog) cpuLine('with', a.withBacklog.cpu);
  }
  if (d.fanout10) {
    const { b, c, e } = d.fanout10;
    if (c)
      log(
        `(b/c) worker round trips per fast delivery: ${round(b.workerRoundTripsPerFastDelivery, 2)} without the slow endpoint, ${round(c.workerRoundTripsPerFastDelivery, 2)} with it; ${d.fanout10.slowDeliveries} deliveries reached it`,
      );
    if (e) {
      log(
        `(b/e) worker round trips per fast delivery: ${round(b.workerRoundTripsPerFastDelivery, 2)} without the dead endpoint, ${round(e.workerRoundTripsPerFastDelivery, 2)} with it`,
      );
      log(
        `(b/e) worker CPU ms per fast delivery: ${round(b.workerCpuMsPerS / Math.max(1e-9, b.fastPerS), 3)} without, ${round(e.workerCpuMsPerS / Math.max(1e-9, e.fastPerS), 3)} with; Postgres CPU ms/s ${round(b.postgresCpuMsPerS)} -> ${round(e.postgresCpuMsPerS)}`,
      );
      const more = [...e.workerStatements]
        .map(([k, n]): [string, number] => [k, n - (b.workerStatements.get(k) ?? 0)])
        .filter(([, n]) => n >= 0.01)
        .sort((x, y) => y[1] - x[1])
        .slice(0, 6);
      if (more.length > 0) {
        log('(b/e) worker statements per fast delivery that grew with the dead endpoint:');
        for (const [statement, n] of more) log(`  +${n.toFixed(2).padStart(5)}  ${statement}`);
      }
    }
  }
  if (d.scale)
    log(
      `(scale) 3 workers: worker CPU ms/s in all ${round(d.scale.workerCpuMsPerS)} (1 worker: ${round(d.fanout10?.b.workerCpuMsPerS ?? 0)}); worker round trips per fast delivery ${round(d.scale.workerRoundTripsPerFastDelivery, 2)}`,
    );
  if (d.durable && f.durable) {
    const cpu = f.durable.fanout1.cpu_ms_per_message;
    log(
      `(durable) ${d.durable.settings}; commits/s first ${round(d.durable.first)}, last ${round(d.durable.last)}; CPU ms per message: server ${cpu.server}, worker ${cpu.worker}, Postgres ${cpu.postgres}; peak RSS ${d.durable.peakRss.server} / ${d.durable.peakRss.worker} MB`,
    );
  }
  if (d.fanout1) {
    log('(a) server round trips per admitted message, by statement:');
    for (const [statement, n] of d.fanout1.serverStatements.slice(0, 12))
      log(`  ${n.toFixed(2).padStart(6)}  ${statement}`);
    log('(a) worker round trips per delivery, by statement:');
    for (const [statement, n] of d.fanout1.workerStatements.slice(0, 14))
      log(`  ${n.toFixed(2).padStart(6)}  ${statement}`);
  }
  for (const [label, rows, per] of [
    ['(a)', d.fanout1?.postgresTime ?? [], 'admitted message'],
    ['(d)', d.fanout1?.withBacklog?.postgresTime ?? [], 'admitted message'],
    ['(b)', d.fanout10?.b.postgresTime ?? [], 'fast delivery'],
  ] as const) {
    if (rows.length === 0) continue;
    log(`${label} Postgres execution ms per ${per} by statement (pg_stat_statements; calls per ${per}):`);
    for (const [statement, ms, calls] of rows)
      log(`  ${ms.toFixed(3).padStart(7)} ms ${calls.toFixed(2).padStart(6)}  ${statement}`);
  }
  for (const summary of d.profiles) log(`\n${summary}`);
  return lines;
}
