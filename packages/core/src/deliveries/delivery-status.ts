/**
 * The status a delivery shows. An attempt in flight is not written to the wide `deliveries` row (the claim leases
 * the delivery's queue row and nothing else, docs/delivery.md): a delivery is `in_flight` while a worker's lease
 * holds its queue row, and the lease's number is its attempt count. Queries that show or filter by status select
 * from DELIVERY_FROM (or join LEASE_JOIN beside `deliveries d`) and use shownStatusSql.
 */
export const LEASE_JOIN = `LEFT JOIN delivery_queue lease ON lease.delivery_id = d.id AND lease.lease_owner IS NOT NULL`;

export const DELIVERY_FROM = `deliveries d ${LEASE_JOIN}`;

/** `scheduled` is a queued delivery not yet due (`now` is the placeholder of the service clock) never attempted. */
export function shownStatusSql(now: string): string {
  return `CASE WHEN lease.delivery_id IS NOT NULL AND d.status IN ('queued', 'retry_wait') THEN 'in_flight'
       WHEN d.status = 'queued' AND d.attempt_count = 0 AND d.next_attempt_at > ${now} THEN 'scheduled'
       ELSE d.status END`;
}

/** The attempts a delivery shows: while one is in flight, its number (the lease's), else those that settled. */
export const SHOWN_ATTEMPT_COUNT_SQL = 'coalesce(lease.attempt, d.attempt_count)';
