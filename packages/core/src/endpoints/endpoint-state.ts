import type { EntityManager, SelectQueryBuilder } from 'typeorm';
import type { CircuitState, EndpointEntity } from './endpoint.entity.js';

/** The probe wait a closed circuit starts from; each failed probe doubles it, up to an hour (the engine's rule). */
export const INITIAL_PROBE_WAIT_SECONDS = 60;

export interface EndpointHealth {
  circuit: CircuitState;
  consecutiveFailures: number;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  nextProbeAt: Date | null;
}

/** What the delivery engine keeps per endpoint, apart from its configuration row. */
export interface EndpointState {
  health: EndpointHealth;
  queuedCount: number;
}

interface StateColumns {
  health_circuit: CircuitState | null;
  health_consecutive_failures: number | null;
  health_last_success_at: Date | null;
  health_last_failure_at: Date | null;
  health_next_probe_at: Date | null;
  queue_pending: string | number | null;
}

interface HealthRow {
  circuit: CircuitState;
  consecutive_failures: number;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  next_probe_at: Date | null;
}

/**
 * Adds the endpoint's health and queued count to a query of endpoints (alias `e`) with LEFT JOINs, so a page or one
 * endpoint is still one query. A missing row (an endpoint made before its rows existed) reads as a closed circuit
 * with nothing queued.
 */
export function joinEndpointState(qb: SelectQueryBuilder<EndpointEntity>): SelectQueryBuilder<EndpointEntity> {
  return (
    qb
      .leftJoin('endpoint_health', 'h', 'h.endpoint_id = e.id')
      .addSelect('h.circuit', 'health_circuit')
      .addSelect('h.consecutive_failures', 'health_consecutive_failures')
      .addSelect('h.last_success_at', 'health_last_success_at')
      .addSelect('h.last_failure_at', 'health_last_failure_at')
      .addSelect('h.next_probe_at', 'health_next_probe_at')
      // The endpoint's counter shards (at most 8 rows by primary key): no delivery is counted.
      .addSelect('(SELECT sum(q.pending) FROM endpoint_queue_counts q WHERE q.endpoint_id = e.id)', 'queue_pending')
  );
}

/** Runs a query built with joinEndpointState: each endpoint with its state, in the query's order. */
export async function endpointsWithState(
  qb: SelectQueryBuilder<EndpointEntity>,
): Promise<{ id: string; endpoint: EndpointEntity; state: EndpointState }[]> {
  const { entities, raw } = await qb.getRawAndEntities<StateColumns>();
  // One-to-one joins: the raw rows and the entities line up.
  return entities.map((endpoint, i) => ({ id: endpoint.id, endpoint, state: stateFromColumns(raw[i]) }));
}

function stateFromColumns(row: StateColumns | undefined): EndpointState {
  return {
    health: {
      circuit: row?.health_circuit ?? 'closed',
      consecutiveFailures: row?.health_consecutive_failures ?? 0,
      lastSuccessAt: row?.health_last_success_at ?? null,
      lastFailureAt: row?.health_last_failure_at ?? null,
      nextProbeAt: row?.health_next_probe_at ?? null,
    },
    queuedCount: Number(row?.queue_pending ?? 0),
  };
}

function healthFromRow(row: HealthRow): EndpointHealth {
  return {
    circuit: row.circuit,
    consecutiveFailures: row.consecutive_failures,
    lastSuccessAt: row.last_success_at,
    lastFailureAt: row.last_failure_at,
    nextProbeAt: row.next_probe_at,
  };
}

/** A new endpoint's health (closed, no failures) and queue counter rows; one statement in the creating transaction. */
export async function insertEndpointState(tx: EntityManager, endpointId: string): Promise<EndpointState> {
  await tx.query(
    `WITH health AS (INSERT INTO endpoint_health (endpoint_id, probe_wait_seconds) VALUES ($1, $2))
     INSERT INTO endpoint_queue_counts (endpoint_id, pending) VALUES ($1, 0)`,
    [endpointId, INITIAL_PROBE_WAIT_SECONDS],
  );
  return stateFromColumns(undefined);
}

const HEALTH_COLUMNS = 'circuit, consecutive_failures, last_success_at, last_failure_at, next_probe_at';

/**
 * A new URL starts with clean health: the circuit closed, no failures, no outcomes of the old URL, the probe wait
 * back to its start. The rate bucket stays (it limits the endpoint, not the URL).
 */
export async function resetEndpointHealth(tx: EntityManager, endpointId: string): Promise<EndpointHealth> {
  const rows: HealthRow[] = await tx.query(
    `INSERT INTO endpoint_health AS h (endpoint_id, probe_wait_seconds) VALUES ($1, $2)
     ON CONFLICT (endpoint_id) DO UPDATE
       SET circuit = 'closed', consecutive_failures = 0, last_success_at = NULL, last_failure_at = NULL,
           next_probe_at = NULL, probe_wait_seconds = EXCLUDED.probe_wait_seconds
     RETURNING ${HEALTH_COLUMNS}`,
    [endpointId, INITIAL_PROBE_WAIT_SECONDS],
  );
  return healthFromRow(rows[0]!);
}

/** Resume: the circuit half open with a probe due now; the engine sends that one probe. */
export async function scheduleProbe(tx: EntityManager, endpointId: string, now: Date): Promise<EndpointHealth> {
  const rows: HealthRow[] = await tx.query(
    `INSERT INTO endpoint_health AS h (endpoint_id, circuit, next_probe_at, probe_wait_seconds)
       VALUES ($1, 'half_open', $2, $3)
     ON CONFLICT (endpoint_id) DO UPDATE SET circuit = 'half_open', next_probe_at = EXCLUDED.next_probe_at
     RETURNING ${HEALTH_COLUMNS}`,
    [endpointId, now, INITIAL_PROBE_WAIT_SECONDS],
  );
  return healthFromRow(rows[0]!);
}
