import type { EntityManager } from 'typeorm';
import { DELIVERY_COLUMNS } from './delivery-columns.js';
import { LEASE_JOIN } from './delivery-status.js';
import { toDeliveryView, type DeliveryRecordRow, type DeliveryView } from './delivery.view.js';

/**
 * Where a delivery went, for the people who look at it (GraphQL `Delivery.target`): the endpoint's name and the URL of
 * the revision its last attempt went to, or of the revision its next attempt goes to when none was made yet.
 */
export interface DeliveryTarget {
  endpointName: string;
  url: string;
  urlRevision: number;
  /**
   * false when that revision predates the recording of URLs (migration 0038) and `url` is the endpoint's current URL
   * instead (docs/deliveries.md, "Where a delivery went").
   */
  urlRecorded: boolean;
}

/** The targets of deliveries of the team, in the order asked; null for an ID the team has no delivery of. */
export async function readDeliveryTargets(
  db: EntityManager,
  teamId: string,
  deliveryIds: readonly string[],
): Promise<(DeliveryTarget | null)[]> {
  const rows: { id: string; name: string; url: string; url_revision: string; recorded: boolean }[] = await db.query(
    `SELECT d.id, e.name, coalesce(r.url, e.url) AS url, coalesce(a.url_revision, e.url_revision) AS url_revision,
            r.url IS NOT NULL AS recorded
       FROM deliveries d
       JOIN endpoints e ON e.id = d.endpoint_id
       LEFT JOIN LATERAL (SELECT x.url_revision FROM attempts x WHERE x.delivery_id = d.id
                           ORDER BY x.number DESC LIMIT 1) a ON true
       LEFT JOIN endpoint_url_revisions r
         ON r.endpoint_id = d.endpoint_id AND r.url_revision = coalesce(a.url_revision, e.url_revision)
      WHERE d.id = ANY($1::text[]) AND d.team_id = $2`,
    [deliveryIds, teamId],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return deliveryIds.map((id) => {
    const row = byId.get(id);
    if (!row) return null;
    return { endpointName: row.name, url: row.url, urlRevision: Number(row.url_revision), urlRecorded: row.recorded };
  });
}

/** At most this many earlier generations are read per delivery (the newest): a summary, not a list to page. */
export const MAX_EARLIER_GENERATIONS = 10;

/**
 * The earlier generations of deliveries of the team (the same message to the same endpoint, lower generation), the
 * newest MAX_EARLIER_GENERATIONS, newest first, in the order asked: a dead letter's original and the replays before
 * it, shown with it as one row.
 */
export async function readEarlierGenerations(
  db: EntityManager,
  teamId: string,
  now: Date,
  deliveryIds: readonly string[],
): Promise<DeliveryView[][]> {
  const rows: (DeliveryRecordRow & { of_id: string })[] = await db.query(
    `SELECT k.id AS of_id, ${DELIVERY_COLUMNS}
       FROM deliveries k
      CROSS JOIN LATERAL (
        SELECT * FROM deliveries x
         WHERE x.message_id = k.message_id AND x.endpoint_id = k.endpoint_id AND x.generation < k.generation
         ORDER BY x.generation DESC
         LIMIT $4) d
       ${LEASE_JOIN}
      WHERE k.id = ANY($2::text[]) AND k.team_id = $3
      ORDER BY k.id, d.generation DESC`,
    [now, deliveryIds, teamId, MAX_EARLIER_GENERATIONS],
  );
  const byId = new Map<string, DeliveryView[]>();
  for (const row of rows) {
    const list = byId.get(row.of_id) ?? [];
    list.push(toDeliveryView(row));
    byId.set(row.of_id, list);
  }
  return deliveryIds.map((id) => byId.get(id) ?? []);
}
