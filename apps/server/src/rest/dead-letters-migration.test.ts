import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '@svc/db';
import { post, startHarness, type Harness } from '../testing/harness.js';

/**
 * Migration 0044 on a database that has dead letters: they move to delivery_dead_letters (the lists read them there
 * at once), the partial index whose predicate kept settlements from updating in place is gone, and the deliveries
 * partitions get their fillfactor. The database is put back to its state before 0044 first (its table, triggers
 * and column removed, the old index made again, deliveries failed and expired with no trigger to see them), so the
 * file also shows it can run again.
 */
let h: Harness;
const deliveries: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  await post(h, '/event_types', { name: 'upgrade.event' });
  const tenantId = (await post(h, '/tenants', { external_id: 'upgrade', name: 'Upgrade' })).json.id;
  await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/upgrade' });
  for (let n = 0; n < 3; n += 1) {
    const published = await post(h, '/messages', { tenant_id: tenantId, event_type: 'upgrade.event', payload: { n } });
    expect(published.status).toBe(202);
    const [row]: { id: string }[] = await h.services.db.query('SELECT id FROM deliveries WHERE message_id = $1', [
      published.json.id,
    ]);
    deliveries.push(row!.id);
  }
});
afterAll(async () => {
  await h.close();
});

/** The distinct storage options of the deliveries partitions. */
async function deliveriesPartitionOptions(): Promise<(string[] | null)[]> {
  const rows: { reloptions: string[] | null }[] = await h.services.db.query(
    `SELECT DISTINCT c.reloptions FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'deliveries'::regclass`,
  );
  return rows.map((row) => row.reloptions);
}

describe('migration 0044 (dead letters in a table of their own)', () => {
  it('moves the existing dead letters, drops the partial index and sets the fillfactor, and can run again', async () => {
    await h.services.db.query(`
      DROP TRIGGER deliveries_dead_letters_insert ON deliveries;
      DROP TRIGGER deliveries_dead_letters_update ON deliveries;
      DROP TRIGGER deliveries_dead_letters_delete ON deliveries;
      DROP FUNCTION deliveries_keep_dead_letters();
      DROP TABLE delivery_dead_letters;
      ALTER TABLE time_partitioned_tables DROP COLUMN fillfactor;
      CREATE INDEX deliveries_dead_letters_idx ON deliveries (team_id, created_at, id)
       WHERE status IN ('failed', 'expired');
      DELETE FROM schema_migrations WHERE id = '0044_dead_letters';`);
    for (const table of await h.services.db.query(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'deliveries'::regclass`,
    ))
      await h.services.db.query(`ALTER TABLE ${(table as { relname: string }).relname} RESET (fillfactor)`);
    await h.services.db.query(`UPDATE deliveries SET status = 'failed' WHERE id = $1`, [deliveries[0]]);
    await h.services.db.query(`UPDATE deliveries SET status = 'expired' WHERE id = $1`, [deliveries[1]]);
    expect(await deliveriesPartitionOptions()).toEqual([null]);

    expect(await runMigrations(h.databaseUrl)).toEqual(['0044_dead_letters']);

    expect(await h.services.db.query('SELECT id, team_id FROM delivery_dead_letters ORDER BY id')).toEqual(
      [deliveries[0], deliveries[1]].sort().map((id) => ({ id, team_id: h.team.teamId })),
    );
    const failed = await h.request('GET', '/deliveries?status=failed');
    expect(failed.json.data.map((d: { id: string }) => d.id)).toEqual([deliveries[0]]);
    const expired = await h.request('GET', '/deliveries?status=expired');
    expect(expired.json.data.map((d: { id: string }) => d.id)).toEqual([deliveries[1]]);
    expect(await h.services.db.query(`SELECT 1 FROM pg_class WHERE relname = 'deliveries_dead_letters_idx'`)).toEqual(
      [],
    );
    expect(await deliveriesPartitionOptions()).toEqual([['fillfactor=80']]);
    expect(
      await h.services.db.query(`SELECT table_name, fillfactor FROM time_partitioned_tables ORDER BY table_name`),
    ).toEqual([
      { table_name: 'attempts', fillfactor: null },
      { table_name: 'deliveries', fillfactor: 80 },
      { table_name: 'message_contents', fillfactor: null },
      { table_name: 'messages', fillfactor: null },
    ]);

    // The triggers came back with it: the third delivery fails and is listed; the first is retried and is not.
    await h.services.db.query(`UPDATE deliveries SET status = 'failed' WHERE id = $1`, [deliveries[2]]);
    await h.services.db.query(`UPDATE deliveries SET status = 'queued' WHERE id = $1`, [deliveries[0]]);
    const after = await h.request('GET', '/deliveries?status=failed');
    expect(after.json.data.map((d: { id: string }) => d.id)).toEqual([deliveries[2]]);
  });
});
