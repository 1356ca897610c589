import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { openCore, type OpenedCore } from '../boot.js';
import { ConfigError } from '../config.js';
import { testCoreOptions } from '../testing/core-options.js';
import { ManualClock } from './clock.js';
import { Sealer } from './sealing.js';
import { checkSealingKey, sealingKeyCheckValue } from './sealing-key-check.js';
import { parseInput } from './validation.js';
import { CreateEndpointInput } from '../endpoints/endpoint.inputs.js';
import { CreateTenantInput } from '../tenants/tenant.inputs.js';

/** The sealing key is checked against the database at start (docs/upgrading.md). */
const opened: OpenedCore[] = [];
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const core of opened) await core.close();
  for (const drop of drops) await drop();
});

async function database(): Promise<string> {
  const created = await createTestDatabase();
  drops.push(created.drop);
  return created.url;
}

async function open(url: string, key: Buffer, options: { checkSealingKey?: boolean } = {}): Promise<OpenedCore> {
  const core = await openCore(testCoreOptions(url, new ManualClock(), { sealingKey: key, poolSize: 2, ...options }));
  opened.push(core);
  return core;
}

const idOf = (key: Buffer) => new Sealer(key).keyId;

/** How an open ended, as text: a core that opened is far too big for a readable failure. */
const outcomeOf = (opening: Promise<OpenedCore>): Promise<string> =>
  opening.then(
    () => 'opened',
    (error: unknown) => (error instanceof ConfigError ? `refused: ${error.message}` : `failed: ${String(error)}`),
  );

describe('the sealing key check at start', () => {
  it('records the first key, opens again with it, and refuses another in one line naming both key IDs only', async () => {
    const url = await database();
    const right = randomBytes(32);
    const wrong = randomBytes(32);
    await open(url, right);
    await open(url, right);
    const refusal = await outcomeOf(open(url, wrong));
    expect(refusal).toMatch(/^refused: /);
    const message = refusal.slice('refused: '.length);
    expect(message).toBe(
      `SVC_ENCRYPTION_KEY is not the key this database's secrets are sealed with (this key's ID is ${idOf(wrong)}, ` +
        `the database's ${idOf(right)}): start every process with the key the others use (docs/upgrading.md)`,
    );
    expect(message).not.toContain(right.toString('base64'));
    expect(message).not.toContain(wrong.toString('base64'));
    expect(message).not.toContain('\n');
  });

  it('on a database upgraded to the check, keeps the key its stored secrets were sealed with', async () => {
    const url = await database();
    const original = randomBytes(32);
    // Secrets sealed before the check existed: a team, a tenant and an endpoint made with the original key, then the
    // check value removed as if migration 0031 had just run.
    const before = await open(url, original);
    const team = await before.services.teams.createTeam('upgraded');
    const key = await before.services.teams.createKey(team.id);
    const ctx = { actor: { teamId: team.id, keyId: key.keyId } };
    const tenant = await before.services.tenants.createTenant(
      ctx,
      parseInput(CreateTenantInput, { external_id: 'up', name: 'Up' }),
    );
    await before.services.endpoints.createEndpoint(
      ctx,
      parseInput(CreateEndpointInput, { tenant_id: tenant.id, url: 'https://receiver.example.com/hook' }),
    );
    await before.services.db.query('DELETE FROM sealing_key_check');

    const other = randomBytes(32);
    expect(await outcomeOf(open(url, other))).toContain(
      `refused: SVC_ENCRYPTION_KEY is not the key this database's secrets are sealed with (this key's ID is ${idOf(other)}, the database's ${idOf(original)})`,
    );
    // The refusal recorded nothing: the right key still starts, and records the check.
    await open(url, original);
    const rows: { n: number }[] = await before.services.db.query('SELECT count(*)::int AS n FROM sealing_key_check');
    expect(rows[0]!.n).toBe(1);
  });

  it('refuses the second of two first starts with different keys: the first one recorded its key meanwhile', async () => {
    const url = await database();
    const { db } = (await open(url, randomBytes(32), { checkSealingKey: false })).services;
    // The first process's record, not committed yet when the second looks (it finds no check value).
    const first = db.createQueryRunner();
    await first.connect();
    await first.startTransaction();
    await first.query('INSERT INTO sealing_key_check (id, sealed) VALUES (true, $1)', [
      sealingKeyCheckValue(new Sealer(randomBytes(32))),
    ]);
    const second = checkSealingKey(db, new Sealer(randomBytes(32))).then(
      () => 'passed',
      (error: unknown) => String(error),
    );
    // The second's own record waits on the first's; once that commits, the second must open the first's, and cannot.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await first.commitTransaction();
    await first.release();
    expect(await second).toMatch(/^ConfigError: SVC_ENCRYPTION_KEY is not the key/);
  });

  it('is skipped, recording nothing, by a process that never opens a secret (the admin CLI)', async () => {
    const url = await database();
    const admin = await open(url, randomBytes(32), { checkSealingKey: false });
    const rows: { n: number }[] = await admin.services.db.query('SELECT count(*)::int AS n FROM sealing_key_check');
    expect(rows[0]!.n).toBe(0);
    // The first process that does check records its own key.
    await open(url, randomBytes(32));
  });
});
