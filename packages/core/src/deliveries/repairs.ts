/**
 * Repaired dead letters. A failed or expired delivery is repaired when a later generation of the same message to the
 * same endpoint (a replay, single or bulk) succeeded. "Later generation" is the rule bulk replays take dead letters
 * by (replay-estimates.ts: a dead letter with a later generation is taken through its newest one only), so the lists
 * mark exactly the dead letters a bulk replay has already sent again and that arrived. The status rule stays the
 * spec's: a repaired delivery still shows failed or expired, and so does its message.
 */

/** `FROM deliveries g WHERE ...`: the later generations of the delivery aliased `d` (deliveries_message_idx). */
export function laterGenerationsSql(d: string): string {
  return `deliveries g WHERE g.message_id = ${d}.message_id AND g.endpoint_id = ${d}.endpoint_id
     AND g.generation > ${d}.generation`;
}

/** The ID of the first later generation that succeeded, for a dead letter `d`; null otherwise (docs/deliveries.md). */
export function repairedBySql(d: string): string {
  return `CASE WHEN ${d}.status IN ('failed', 'expired') THEN (
      SELECT g.id FROM ${laterGenerationsSql(d)} AND g.status = 'succeeded' ORDER BY g.generation LIMIT 1) END`;
}

/** How many of message `m`'s original deliveries are dead letters a later generation repaired. */
export function repairedCountSql(m: string): string {
  return `(SELECT count(*)::int FROM deliveries r
      WHERE r.message_id = ${m}.id AND r.generation = 0 AND r.status IN ('failed', 'expired')
        AND EXISTS (SELECT 1 FROM ${laterGenerationsSql('r')} AND g.status = 'succeeded'))`;
}
