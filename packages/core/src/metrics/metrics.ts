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

  readonly attempts = new Counter({
    name: 'svc_delivery_attempts_total',
    help: 'Delivery attempts by outcome (succeeded, retry_wait, failed, expired; timeout, network_error, unsafe_destination without a response; already_settled when another attempt had settled the delivery)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly subscriptionAttempts = new Counter({
    name: 'svc_subscription_delivery_attempts_total',
    help: 'Event subscription delivery attempts by verdict (succeeded, retry, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly attemptSeconds = new Histogram({
    name: 'svc_delivery_attempt_duration_seconds',
    help: 'Time from dialling the receiver to the end of its response (or the failure)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly acceptToDeliverySeconds = new Histogram({
    name: 'svc_accept_to_delivery_seconds',
    help: "From a message's acceptance (or its deliver_at) to its delivery's successful attempt",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600, 3600],
    registers: [this.registry],
  });

  readonly admissionRefusals = new Counter({
    name: 'svc_admission_refusals_total',
    help: 'Messages refused at admission (POST /messages, publishMessage, endpoint tests, source captures) by reason: the error code answered (rate_limited, too_many_concurrent_requests, queue_full, billing_required, spending_limit, invalid_field, ...)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly admissionsHeld = new Gauge({
    name: 'svc_admissions_held',
    help: 'Admissions this server process holds, waiting for their batch or in it (bounded: docs/admission.md)',
    registers: [this.registry],
  });

  readonly admissionBytesHeld = new Gauge({
    name: 'svc_admission_bytes_held',
    help: 'Bytes of the message bodies of the admissions this server process holds',
    registers: [this.registry],
  });

  readonly jobsGivenUp = new Counter({
    name: 'svc_jobs_given_up_total',
    help: 'pg-boss jobs that failed on their last allowed try (the job stays in pg-boss as failed), by queue',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });

  readonly fetchBatchSize = new Histogram({
    name: 'svc_worker_fetch_batch_size',
    help: 'Jobs returned by one fetch, by queue',
    labelNames: ['queue'] as const,
    buckets: [0, 1, 2, 5, 10, 20, 50, 100, 200],
    registers: [this.registry],
  });

  readonly dispatchLanesLookedAt = new Counter({
    name: 'svc_dispatch_lanes_looked_at_total',
    help: 'Endpoints the delivery engine looked at to plan its claims (grows with the endpoints that have something to do)',
    registers: [this.registry],
  });

  readonly poolInUse = new Gauge({
    name: 'svc_worker_pool_in_use',
    help: 'Jobs running in this worker process',
    registers: [this.registry],
  });

  readonly poolCapacity = new Gauge({
    name: 'svc_worker_pool_capacity',
    help: 'Most jobs this worker process runs at once',
    registers: [this.registry],
  });

  readonly sealingKeyMismatches = new Counter({
    name: 'svc_sealing_key_mismatches_total',
    help: "Deliveries this worker claimed and handed back unsent because their endpoint's secrets are sealed with another key than its SVC_ENCRYPTION_KEY: the process's fault, the delivery waits for another worker (docs/operations.md)",
    registers: [this.registry],
  });

  readonly standingDown = new Gauge({
    name: 'svc_worker_standing_down',
    help: '1 while this worker claims no deliveries because it met secrets sealed with another key (it rejoins after a pause), else 0',
    registers: [this.registry],
  });

  // Scrape-time gauges: the queue as Postgres sees it, read when /metrics is rendered.
  private queueCache: { at: number; value: Promise<QueueSnapshot> } | null = null;

  constructor(private readonly sources?: MetricsSources) {
    if (!sources) return;
    const pending: Gauge = new Gauge({
      name: 'svc_pending_deliveries',
      help: 'Deliveries admitted and not finished, all teams (scheduled, queued, in flight, waiting to retry)',
      registers: [this.registry],
      collect: async () => pending.set((await this.readQueue()).pending),
    });
    const subscriptionPending: Gauge = new Gauge({
      name: 'svc_subscription_pending_deliveries',
      help: 'Event subscription deliveries pending, all teams (waiting their turn, in flight or between retries)',
      registers: [this.registry],
      collect: async () => subscriptionPending.set((await this.readQueue()).subscriptionPending),
    });
    const oldestDue: Gauge = new Gauge({
      name: 'svc_oldest_due_age_seconds',
      help: 'How long the oldest due delivery (queued or retry_wait, next attempt at or before now) has waited',
      registers: [this.registry],
      collect: async () => oldestDue.set((await this.readQueue()).oldestDueAgeSeconds),
    });
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
