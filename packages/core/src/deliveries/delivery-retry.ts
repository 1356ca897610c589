import type { EntityManager } from 'typeorm';
import { notFound, ServiceError } from '../common/errors.js';
import { wakeEndpoints } from '../engine/wake-endpoints.js';

/**
 * POST /deliveries/{id}/retry_now: a delivery waiting for a retry, or held behind an open circuit, becomes due
 * now. It keeps its attempts (the next one is the next number) and costs nothing. Behind an open circuit the
 * attempt goes as the endpoint's probe. Anything else is 409 invalid_state.
 */
export async function retryDeliveryNow(tx: EntityManager, teamId: string, id: string, now: Date): Promise<void> {
  // Its queue row before the delivery, the order the engine locks them in. A leased row is an attempt in flight.
  const queue: { leased: boolean }[] = await tx.query(
    `SELECT lease_owner IS NOT NULL AS leased FROM delivery_queue WHERE delivery_id = $1 FOR UPDATE`,
    [id],
  );
  const inFlight = queue[0]?.leased === true;
  const rows: {
    status: string;
    endpoint_id: string;
    attempt_count: number;
    next_attempt_at: Date;
    expires_at: Date;
    endpoint_status: string;
    endpoint_deleted: boolean;
    circuit: string | null;
  }[] = await tx.query(
    `SELECT d.status, d.endpoint_id, d.attempt_count, d.next_attempt_at, d.expires_at, e.status AS endpoint_status,
            e.deleted_at IS NOT NULL AS endpoint_deleted, h.circuit
       FROM deliveries d
       JOIN endpoints e ON e.id = d.endpoint_id
       LEFT JOIN endpoint_health h ON h.endpoint_id = d.endpoint_id
      WHERE d.id = $1 AND d.team_id = $2
        FOR NO KEY UPDATE OF d`,
    [id, teamId],
  );
  const row = rows[0];
  if (!row) throw notFound('delivery');
  const behindCircuit = row.status === 'queued' && row.circuit !== null && row.circuit !== 'closed';
  if (inFlight || (row.status !== 'retry_wait' && !behindCircuit))
    throw new ServiceError(
      'invalid_state',
      !inFlight && row.status === 'queued'
        ? 'the delivery is not waiting for a retry (only retry_wait, or queued behind an open circuit)'
        : `a ${inFlight ? 'in_flight' : displayStatus(row, now)} delivery cannot be retried now; replay a finished one instead`,
    );
  if (row.endpoint_deleted || row.endpoint_status !== 'enabled')
    throw new ServiceError(
      'invalid_state',
      `the endpoint is ${row.endpoint_deleted ? 'deleted' : row.endpoint_status}; enable or resume it first`,
    );
  if (row.expires_at <= now)
    throw new ServiceError('invalid_state', 'the delivery window is over: no attempt may start');
  // Due now in the queue; behind an open circuit, the probe may go now too (this attempt is the probe). The
  // endpoint's owner is woken at commit.
  await tx.query(
    `WITH queue AS (UPDATE delivery_queue SET due_at = $2 WHERE delivery_id = $1 AND lease_owner IS NULL),
     probe AS (
       UPDATE endpoint_health SET next_probe_at = $2
        WHERE endpoint_id = $3 AND circuit = 'open' AND (next_probe_at IS NULL OR next_probe_at > $2))
     UPDATE deliveries SET next_attempt_at = $2, next_trigger = 'retry_now', updated_at = $2 WHERE id = $1`,
    [id, now, row.endpoint_id],
  );
  wakeEndpoints(tx, [row.endpoint_id], { reread: true });
}

function displayStatus(row: { status: string; attempt_count: number; next_attempt_at: Date }, now: Date): string {
  return row.status === 'queued' && row.attempt_count === 0 && row.next_attempt_at > now ? 'scheduled' : row.status;
}
