import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { ROOT } from './local-runtime.js';

const run = promisify(execFile);
let databaseUrl: string;
let drop: () => Promise<void>;
// The CLI keeps local-mode files (the sealing key) in its data dir: a throwaway one, not the repository's.
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-admin-test-'));

beforeAll(async () => {
  const database = await createTestDatabase();
  databaseUrl = database.url;
  drop = database.drop;
});
afterAll(async () => {
  await drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function admin(...args: string[]): Promise<{ code: number; out: unknown; err: string }> {
  try {
    const { stdout, stderr } = await run(
      path.join(ROOT, 'node_modules/.bin/tsx'),
      [path.join(ROOT, 'scripts/admin.ts'), ...args],
      {
        env: { ...process.env, DATABASE_URL: databaseUrl, SVC_DATA_DIR: dataDir },
      },
    );
    return { code: 0, out: JSON.parse(stdout), err: stderr };
  } catch (error) {
    const failure = error as { code: number; stderr: string };
    return { code: failure.code, out: null, err: failure.stderr };
  }
}

async function status(key: string): Promise<number> {
  // The key is checked by the same AuthService the server uses.
  const { openCore, systemClock, testCoreOptions } = await import('@svc/core');
  const core = await openCore(testCoreOptions(databaseUrl, systemClock, { poolSize: 1 }));
  try {
    await core.services.auth.authenticate(`Bearer ${key}`);
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
  } finally {
    await core.close();
  }
}

describe('admin CLI', () => {
  it('creates and lists teams, issues and revokes keys, suspends and sets billing, printing JSON', async () => {
    const team = await admin('team', 'create', '--name', 'acme');
    expect(team.out).toEqual({ team_id: expect.stringMatching(/^team_/) });
    const teamId = (team.out as { team_id: string }).team_id;
    expect((await admin('team', 'list')).out).toContainEqual({ team_id: teamId, name: 'acme' });

    const key = await admin('key', 'create', '--team', teamId, '--spending-limit-usd', '12.50');
    expect(key.out).toEqual({ key_id: expect.stringMatching(/^key_/), secret: expect.stringMatching(/^svc_sk_/) });
    const { key_id: keyId, secret } = key.out as { key_id: string; secret: string };
    expect(await status(secret)).toBe(200);

    const publishable = (await admin('key', 'create', '--team', teamId, '--publishable')).out as { secret: string };
    expect(publishable.secret).toMatch(/^svc_pk_/);
    expect(await status(publishable.secret)).toBe(401);
    const noWebhooks = (await admin('key', 'create', '--team', teamId, '--no-webhooks')).out as { secret: string };
    expect(await status(noWebhooks.secret)).toBe(401);

    expect((await admin('team', 'suspend', '--team', teamId, '--webhooks-only')).code).toBe(0);
    expect(await status(secret)).toBe(403);
    expect((await admin('team', 'unsuspend', '--team', teamId)).code).toBe(0);
    expect(await status(secret)).toBe(200);
    expect((await admin('team', 'billing', '--team', teamId, '--card', 'off')).out).toEqual({
      team_id: teamId,
      payment_card: false,
    });

    expect((await admin('key', 'revoke', '--key', keyId)).out).toEqual({ key_id: keyId, revoked: true });
    expect(await status(secret)).toBe(401);
  }, 60_000);

  it('fails with a JSON error and a non-zero exit for bad usage', async () => {
    const unknown = await admin('team', 'explode');
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.err)).toEqual({ error: 'unknown command "team explode"' });
    const badLimit = await admin('key', 'create', '--team', 'team_x', '--spending-limit-usd', 'lots');
    expect(badLimit.code).toBe(2);
    const missingTeam = await admin('key', 'create', '--team', 'team_nope');
    expect(missingTeam.code).toBe(1);
    expect(JSON.parse(missingTeam.err).error).toMatch(/not found/);
  }, 60_000);
});
