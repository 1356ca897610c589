import type { EntityManager } from 'typeorm';

/**
 * Keeps the URL of each of an endpoint's url_revisions (endpoint_url_revisions, migration 0038), written in the
 * transaction that creates the endpoint or moves its revision: attempts record only the revision they went to, and
 * support needs the URL behind it after the URL has changed again.
 */
export async function recordUrlRevision(
  tx: EntityManager,
  endpoint: { id: string; url: string; urlRevision: string },
  now: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO endpoint_url_revisions (endpoint_id, url_revision, url, created_at) VALUES ($1, $2, $3, $4)`,
    [endpoint.id, endpoint.urlRevision, endpoint.url, now],
  );
}
