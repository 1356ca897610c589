/**
 * The analytics facts the transitions append (docs/analytics.md). Each builder returns an SQL statement the hot path
 * embeds as a CTE of a statement it already sends, so recording a fact costs no round trip. The placeholders are the
 * caller's: pass the `$n` (with its cast where the caller's statement does not already fix the type) of each value.
 * This module is the one place that knows the columns of analytics_facts.
 */

/** An admitted message: counted once for the team, its tenant and source, and once for each endpoint it fans out to. */
export function admissionFactSql(p: {
  teamId: string;
  tenantId: string;
  sourceId: string;
  at: string;
  bodyBytes: string;
  deliveries: string;
  fanout: string;
}): string {
  return `INSERT INTO analytics_facts (team_id, tenant_id, source_id, at, admitted, ingest_bytes, deliveries, fanout)
          VALUES (${p.teamId}, ${p.tenantId}, ${p.sourceId}, ${p.at}, 1, ${p.bodyBytes}, ${p.deliveries}, ${p.fanout})`;
}

/**
 * Admitted messages of one batch, one fact each, from parallel arrays (the placeholders name them, with their casts);
 * `fanouts` is a JSON array per message of the endpoint IDs it fans out to.
 */
export function admissionFactsSql(p: {
  teamIds: string;
  tenantIds: string;
  sourceIds: string;
  at: string;
  bodyBytes: string;
  deliveries: string;
  fanouts: string;
}): string {
  return `INSERT INTO analytics_facts (team_id, tenant_id, source_id, at, admitted, ingest_bytes, deliveries, fanout)
          SELECT x.team_id, x.tenant_id, x.source_id, ${p.at}, 1, x.body_bytes, x.deliveries,
                 ARRAY(SELECT jsonb_array_elements_text(x.fanout))
            FROM unnest(${p.teamIds}, ${p.tenantIds}, ${p.sourceIds}, ${p.bodyBytes}, ${p.deliveries}, ${p.fanouts})
                 AS x(team_id, tenant_id, source_id, body_bytes, deliveries, fanout)`;
}

/**
 * New delivery generations (replays), one fact each, from the rows of `from`: a CTE or table expression with
 * columns team_id, tenant_id, endpoint_id, message_id and created_at, such as
 * `INSERT INTO deliveries ... RETURNING team_id, tenant_id, endpoint_id, message_id, created_at`.
 * Originals are counted by admission (admissionFactSql); do not count them again.
 */
export function deliveriesCreatedFactSql(from: string): string {
  return `INSERT INTO analytics_facts (team_id, tenant_id, endpoint_id, message_id, at, deliveries)
          SELECT team_id, tenant_id, endpoint_id, message_id, created_at, 1 FROM ${from}`;
}

/**
 * A settlement's facts, from two of its CTEs: `attempts` (one row per attempt: id, number, team_id, tenant_id,
 * endpoint_id, message_id, started_at) and `ended` (the deliveries it finished: id, attempt_count, team_id, tenant_id,
 * endpoint_id, message_id, status, finished_at; the attempt that finished one is the one whose number it counts). One fact per attempt,
 * counted when it started; a delivery the attempt finished is counted in the same row when it finished in the same
 * UTC hour (the rollups are hourly: the hour's counts are the same, one row fewer per delivery), and in a row of its
 * own at its finished_at otherwise.
 */
export function settledFactsSql(p: { attempts: string; ended: string }): { attempts: string; finished: string } {
  const sameHour = `date_trunc('hour', e.finished_at, 'UTC') = date_trunc('hour', a.started_at, 'UTC')`;
  return {
    attempts: `INSERT INTO analytics_facts (team_id, tenant_id, endpoint_id, message_id, at, attempts, succeeded, failed,
                                            expired, canceled)
          SELECT a.team_id, a.tenant_id, a.endpoint_id, a.message_id, a.started_at, 1,
                 CASE WHEN e.status = 'succeeded' THEN 1 END, CASE WHEN e.status = 'failed' THEN 1 END,
                 CASE WHEN e.status = 'expired' THEN 1 END, CASE WHEN e.status = 'canceled' THEN 1 END
            FROM ${p.attempts} a
            LEFT JOIN ${p.ended} e ON e.id = a.id AND e.attempt_count = a.number AND ${sameHour}`,
    finished: `INSERT INTO analytics_facts (team_id, tenant_id, endpoint_id, message_id, at, succeeded, failed, expired,
                                            canceled)
          SELECT e.team_id, e.tenant_id, e.endpoint_id, e.message_id, e.finished_at,
                 CASE WHEN e.status = 'succeeded' THEN 1 END, CASE WHEN e.status = 'failed' THEN 1 END,
                 CASE WHEN e.status = 'expired' THEN 1 END, CASE WHEN e.status = 'canceled' THEN 1 END
            FROM ${p.ended} e JOIN ${p.attempts} a ON a.id = e.id AND a.number = e.attempt_count
           WHERE NOT (${sameHour})`,
  };
}

/**
 * Deliveries that reached a terminal status, counted at their finished_at (which the caller set earlier in the
 * transaction): the placeholders name parallel arrays of delivery IDs and their statuses.
 */
export function finishedFactsSql(p: { deliveryIds: string; statuses: string }): string {
  return `INSERT INTO analytics_facts (team_id, tenant_id, endpoint_id, message_id, at, succeeded, failed, expired,
                                       canceled)
          SELECT d.team_id, d.tenant_id, d.endpoint_id, d.message_id, d.finished_at,
                 CASE WHEN x.status = 'succeeded' THEN 1 END, CASE WHEN x.status = 'failed' THEN 1 END,
                 CASE WHEN x.status = 'expired' THEN 1 END, CASE WHEN x.status = 'canceled' THEN 1 END
            FROM unnest(${p.deliveryIds}, ${p.statuses}) AS x(id, status)
            JOIN deliveries d ON d.id = x.id`;
}

/** A refusal of a source or team: a duplicate capture, a capture that did not verify, or a throttled request. */
export type RefusalKind = 'duplicates' | 'rejected_auth' | 'throttled';

/**
 * One refusal fact; `when`, an SQL condition, makes it conditional (a rate-limit statement that took no token), and
 * `count`, an SQL expression, makes it stand for several refusals (the requests one rate-limit statement refused).
 */
export function refusalFactSql(
  kind: RefusalKind,
  p: { teamId: string; tenantId: string; sourceId: string; at: string },
  when = 'true',
  count = '1',
): string {
  return `INSERT INTO analytics_facts (team_id, tenant_id, source_id, at, ${kind})
          SELECT (${p.teamId})::text, (${p.tenantId})::text, (${p.sourceId})::text, (${p.at})::timestamptz, ${count}
           WHERE ${when}`;
}

/** Who a refusal counts for: the team, and for sources their tenant and the source. */
export interface RefusalScope {
  teamId: string;
  tenantId: string | null;
  sourceId: string | null;
}
