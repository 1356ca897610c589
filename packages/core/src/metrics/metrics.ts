import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';

/** Where the scrape-time gauges read the queue from. */
export interface MetricsSources {
  db: DataSource;
  clock: Clock;
}

interface QueueSnapshot {
  pending: number;
  subscriptionPending: number;
  oldestDueAgeSeconds: number;
  /** Live endpoints (enabled, not deleted) whose circuit is not closed, by state. */
  circuits: Record<CircuitGaugeState, number>;
}

/** The circuit states the gauge counts: closed is every other endpoint and is not counted (nothing to watch). */
export const CIRCUIT_GAUGE_STATES = ['open', 'half_open'] as const;
type CircuitGaugeState = (typeof CIRCUIT_GAUGE_STATES)[number];

/** A scrape reads Postgres at most this often; scrapes in between (many scrapers, retries) share the answer. */
const QUEUE_CACHE_MS = 1000;
/** A scrape never waits long on a busy database: past this the gauges read NaN. */
const QUEUE_QUERY_TIMEOUT_MS = 500;

/**
 * The process's Prometheus metrics. Each process (server, worker) has one registry; /metrics renders it.
 * Labels carry outcomes and queue names only, never IDs, URLs or payloads.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly attempts = this.counter(
    'svc_delivery_attempts_total',
    'Delivery attempts by outcome (succeeded, retry_wait, failed, expired; timeout, network_error, unsafe_destination without a response; already_settled when another attempt had settled the delivery)',
    ['outcome'] as const,
  );

  readonly subscriptionAttempts = this.counter(
    'svc_subscription_delivery_attempts_total',
    'Event subscription delivery attempts by verdict (succeeded, retry, failed)',
    ['outcome'] as const,
  );

  readonly attemptSeconds = this.histogram(
    'svc_delivery_attempt_duration_seconds',
    'Time from dialling the receiver to the end of its response (or the failure)',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );

  readonly acceptToDeliverySeconds = this.histogram(
    'svc_accept_to_delivery_seconds',
    "From a message's acceptance (or its deliver_at) to its delivery's successful attempt",
    [0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600, 3600],
  );

  readonly admissionRefusals = this.counter(
    'svc_admission_refusals_total',
    'Messages refused at admission (POST /messages, publishMessage, endpoint tests, source captures) by reason: the error code answered (rate_limited, too_many_concurrent_requests, queue_full, billing_required, spending_limit, invalid_field, ...)',
    ['reason'] as const,
  );

  readonly admissionsHeld = this.gauge(
    'svc_admissions_held',
    'Admissions this server process holds, waiting for their batch or in it (bounded: docs/admission.md)',
  );

  readonly admissionBytesHeld = this.gauge(
    'svc_admission_bytes_held',
    'Bytes of the message bodies of the admissions this server process holds',
  );

  readonly jobsGivenUp = this.counter(
    'svc_jobs_given_up_total',
    'pg-boss jobs that failed on their last allowed try (the job stays in pg-boss as failed), by queue',
    ['queue'] as const,
  );

  readonly fetchBatchSize = this.histogram(
    'svc_worker_fetch_batch_size',
    'Jobs returned by one fetch, by queue',
    [0, 1, 2, 5, 10, 20, 50, 100, 200],
    ['queue'] as const,
  );

  readonly dispatchLanesLookedAt = this.counter(
    'svc_dispatch_lanes_looked_at_total',
    'Endpoints the delivery engine looked at to plan its claims (grows with the endpoints that have something to do)',
  );

  readonly poolInUse = this.gauge('svc_worker_pool_in_use', 'Jobs running in this worker process');

  readonly poolCapacity = this.gauge('svc_worker_pool_capacity', 'Most jobs this worker process runs at once');

  readonly sealingKeyMismatches = this.counter(
    'svc_sealing_key_mismatches_total',
    "Deliveries this worker claimed and handed back unsent because their endpoint's secrets are sealed with another key than its SVC_ENCRYPTION_KEY: the process's fault, the delivery waits for another worker (docs/operations.md)",
  );

  readonly standingDown = this.gauge(
    'svc_worker_standing_down',
    '1 while this worker claims no deliveries because it met secrets sealed with another key (it rejoins after a pause), else 0',
  );

  // Scrape-time gauges: the queue as Postgres sees it, read when /metrics is rendered.
  private queueCache: { at: number; value: Promise<QueueSnapshot> } | null = null;

  constructor(private readonly sources?: MetricsSources) {
    if (!sources) return;
    const scalar = (name: string, help: string, read: (snapshot: QueueSnapshot) => number) => {
      const gauge: Gauge = new Gauge({
        name,
        help,
        registers: [this.registry],
        collect: async () => gauge.set(read(await this.readQueue())),
      });
    };
    scalar(
      'svc_pending_deliveries',
      'Deliveries admitted and not finished, all teams (scheduled, queued, in flight, waiting to retry)',
      (snapshot) => snapshot.pending,
    );
    scalar(
      'svc_subscription_pending_deliveries',
      'Event subscription deliveries pending, all teams (waiting their turn, in flight or between retries)',
      (snapshot) => snapshot.subscriptionPending,
    );
    scalar(
      'svc_oldest_due_age_seconds',
      'How long the oldest due delivery (queued or retry_wait, next attempt at or before now) has waited',
      (snapshot) => snapshot.oldestDueAgeSeconds,
    );
    const circuits: Gauge<'state'> = new Gauge({
      name: 'svc_endpoint_circuits',
      help: 'Enabled endpoints whose circuit is open (deliveries wait for the next probe) or half_open (a probe is due or running), all teams',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect: async () => {
        const snapshot = await this.readQueue();
        for (const state of CIRCUIT_GAUGE_STATES) circuits.set({ state }, snapshot.circuits[state]);
      },
    });
  }

  private counter<L extends string = string>(name: string, help: string, labelNames?: readonly L[]): Counter<L> {
    return new Counter<L>({ name, help, ...(labelNames ? { labelNames } : {}), registers: [this.registry] });
  }

  private gauge(name: string, help: string): Gauge {
    return new Gauge({ name, help, registers: [this.registry] });
  }

  private histogram<L extends string = string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames?: readonly L[],
  ): Histogram<L> {
    return new Histogram<L>({ name, help, buckets, ...(labelNames ? { labelNames } : {}), registers: [this.registry] });
  }

  /**
   * One short query for the scrape-time gauges (queue, subscriptions, circuits), cached for a second. A failure or timeout reads NaN rather than a stale
   * number: a scrape must not report a healthy queue it could not see.
   */
  private readQueue(): Promise<QueueSnapshot> {
    const sources = this.sources!;
    const now = sources.clock.now();
    const cached = this.queueCache;
    if (cached && now.getTime() - cached.at < QUEUE_CACHE_MS && now.getTime() >= cached.at) return cached.value;
    const value = sources.db
      .transaction(async (tx) => {
        await tx.query(`SET LOCAL statement_timeout = ${QUEUE_QUERY_TIMEOUT_MS}`);
        const rows: {
          pending: string;
          oldest_due: Date | null;
          subscription_pending: string;
          circuit_open: string;
          circuit_half_open: string;
        }[] = await tx.query(
          `WITH RECURSIVE walk(endpoint_id) AS (
             SELECT min(endpoint_id) FROM delivery_queue
             UNION ALL
             SELECT (SELECT min(q.endpoint_id) FROM delivery_queue q WHERE q.endpoint_id > w.endpoint_id)
               FROM walk w WHERE w.endpoint_id IS NOT NULL),
           -- Served by endpoint_health_not_closed_idx: only the endpoints whose circuit is not closed are read.
           circuits AS (
             SELECT count(*) FILTER (WHERE h.circuit = 'open') AS open,
                    count(*) FILTER (WHERE h.circuit = 'half_open') AS half_open
               FROM endpoint_health h JOIN endpoints e ON e.id = h.endpoint_id
              WHERE h.circuit <> 'closed' AND e.status = 'enabled' AND e.deleted_at IS NULL)
           SELECT (SELECT coalesce(sum(pending), 0) FROM team_queue_counts)::text AS pending,
                  (SELECT min(first) FROM (
                     SELECT (SELECT min(q.due_at) FROM delivery_queue q WHERE q.endpoint_id = w.endpoint_id) AS first
                       FROM walk w WHERE w.endpoint_id IS NOT NULL) f WHERE first <= $1) AS oldest_due,
                  (SELECT count(*) FROM subscription_deliveries WHERE status = 'pending')::text AS subscription_pending,
                  c.open::text AS circuit_open, c.half_open::text AS circuit_half_open
             FROM circuits c`,
          [now],
        );
        const row = rows[0];
        const oldest = row?.oldest_due ?? null;
        return {
          pending: Number(row?.pending ?? 0),
          subscriptionPending: Number(row?.subscription_pending ?? 0),
          oldestDueAgeSeconds: oldest ? Math.max(0, (now.getTime() - oldest.getTime()) / 1000) : 0,
          circuits: { open: Number(row?.circuit_open ?? 0), half_open: Number(row?.circuit_half_open ?? 0) },
        };
      })
      .catch(() => ({
        pending: Number.NaN,
        subscriptionPending: Number.NaN,
        oldestDueAgeSeconds: Number.NaN,
        circuits: { open: Number.NaN, half_open: Number.NaN },
      }));
    this.queueCache = { at: now.getTime(), value };
    return value;
  }
}
