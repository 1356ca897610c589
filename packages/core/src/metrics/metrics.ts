import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics. Each process (server, worker) has one registry; /metrics renders it.
 * Labels carry outcomes and queue names only, never IDs, URLs or payloads.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly attempts = new Counter({
    name: 'svc_delivery_attempts_total',
    help: 'Delivery attempts by outcome (succeeded, retry, failed, expired, timeout, network_error, unsafe_destination)',
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

  readonly fetchBatchSize = new Histogram({
    name: 'svc_worker_fetch_batch_size',
    help: 'Jobs returned by one fetch, by queue',
    labelNames: ['queue'] as const,
    buckets: [0, 1, 2, 5, 10, 20, 50, 100, 200],
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
}
