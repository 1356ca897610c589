import type { DataSource } from 'typeorm';
import { ConfigError } from '../config.js';
import { Sealer } from './sealing.js';

/** What the check value seals, under its own context: no secret, only proof of the key. */
const CHECK_PLAINTEXT = 'svc-webhooks sealing key check v1';
const CHECK_CONTEXT = 'sealing-key-check';

/** Every column that holds sealed values (the first start after upgrading looks at them before recording a check). */
const SEALED_COLUMNS: readonly (readonly [table: string, column: string])[] = [
  ['endpoint_secrets', 'secret_sealed'],
  ['endpoints', 'headers_sealed'],
  ['endpoints', 'authorization_sealed'],
  ['source_secrets', 'secret_sealed'],
  ['source_tokens', 'token_sealed'],
  ['event_subscriptions', 'secret_sealed'],
  ['event_subscriptions', 'previous_secret_sealed'],
];

/**
 * The key IDs the stored sealed values name (the 4 bytes after the format byte). Once per database, at the first
 * start after migration 0031: a scan of the tables that hold secrets, one row per endpoint, source or subscription.
 */
const STORED_KEY_IDS_SQL = `
  SELECT DISTINCT encode(substring(v FROM 2 FOR 4), 'hex') AS key_id
    FROM (${SEALED_COLUMNS.map(([table, column]) => `SELECT ${column} AS v FROM ${table}`).join(' UNION ALL ')}) s
   WHERE v IS NOT NULL AND length(v) > 5 AND get_byte(v, 0) = 1`;

/** The check value a key records: the fixed text sealed under its own context. */
export function sealingKeyCheckValue(sealer: Sealer): Buffer {
  return sealer.seal(CHECK_PLAINTEXT, CHECK_CONTEXT);
}

function mismatch(sealer: Sealer, theirs: readonly string[]): ConfigError {
  return new ConfigError(
    `SVC_ENCRYPTION_KEY is not the key this database's secrets are sealed with (this key's ID is ${sealer.keyId}, ` +
      `the database's ${theirs.join(', ')}): start every process with the key the others use (docs/upgrading.md)`,
  );
}

/**
 * Checks this process's sealing key against the database before it serves or delivers anything (docs/upgrading.md,
 * "The sealing key is checked at start"). The first process to start records a check value sealed with its key
 * (table sealing_key_check); every later start must open it. Before recording, the stored secrets must include some
 * sealed with this key when there are any: a database upgraded to this check keeps the key it was sealed with. A
 * wrong key throws a ConfigError whose message is one line naming both key IDs (fingerprints, never the key).
 */
export async function checkSealingKey(db: DataSource, sealer: Sealer): Promise<void> {
  let stored = await readCheckValue(db);
  if (stored === null) {
    const keyIds = ((await db.query(STORED_KEY_IDS_SQL)) as { key_id: string }[]).map((row) => row.key_id);
    if (keyIds.length > 0 && !keyIds.includes(sealer.keyId)) throw mismatch(sealer, keyIds);
    // Two first starts at once: one row wins, and the other process must open the winner's.
    await db.query(`INSERT INTO sealing_key_check (id, sealed) VALUES (true, $1) ON CONFLICT (id) DO NOTHING`, [
      sealingKeyCheckValue(sealer),
    ]);
    stored = (await readCheckValue(db))!;
  }
  let opened: string | null = null;
  try {
    opened = sealer.open(stored, CHECK_CONTEXT);
  } catch {
    opened = null;
  }
  if (opened !== CHECK_PLAINTEXT) throw mismatch(sealer, [Sealer.keyIdOf(stored) ?? 'unknown']);
}

async function readCheckValue(db: DataSource): Promise<Buffer | null> {
  const rows: { sealed: Buffer }[] = await db.query(`SELECT sealed FROM sealing_key_check WHERE id`);
  return rows[0]?.sealed ?? null;
}
