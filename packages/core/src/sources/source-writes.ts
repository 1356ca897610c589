import type { EntityManager } from 'typeorm';

/**
 * Deletes sources (soft: the row stays for messages that name it) with their receive tokens, so their URLs stop
 * answering at once; secrets go too. Used by DELETE /sources/{id} and by tenant deletion.
 */
export async function deleteSources(
  tx: EntityManager,
  where: { ids: readonly string[] } | { tenantId: string },
  now: Date,
): Promise<void> {
  const byIds = 'ids' in where;
  const [rows]: [{ id: string }[], number] = await tx.query(
    `UPDATE sources SET deleted_at = $2, updated_at = $2, version = version + 1
      WHERE ${byIds ? 'id = ANY($1::text[])' : 'tenant_id = $1'} AND deleted_at IS NULL
      RETURNING id`,
    [byIds ? where.ids : where.tenantId, now],
  );
  const ids = rows.map((r) => r.id);
  if (ids.length === 0) return;
  await tx.query(`DELETE FROM source_tokens WHERE source_id = ANY($1::text[])`, [ids]);
  await tx.query(`DELETE FROM source_secrets WHERE source_id = ANY($1::text[])`, [ids]);
}
