import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCore, systemClock, testCoreOptions, type OpenedCore } from '@svc/core';
import { createTestDatabase } from '@svc/db';
import { buildProduction } from './build.js';
import { ROOT } from './local-runtime.js';

const run = promisify(execFile);
let databaseUrl: string;
let drop: () => Promise<void>;
let core: OpenedCore;
// The CLI keeps local-mode files (the sealing key) in its data dir: a throwaway one, not the repository's.
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-admin-test-'));
// The CLI as the image runs it: built once (a tsx start per command took seconds on a busy machine).
const buildDir = path.join(ROOT, '.tmp', `admin-test-${process.pid}`);

beforeAll(async () => {
  const [database] = await Promise.all([createTestDatabase(), buildProduction(buildDir)]);
  databaseUrl = database.url;
  drop = database.drop;
  core = await openCore(testCoreOptions(databaseUrl, systemClock, { poolSize: 1 }));
}, 120_000);
afterAll(async () => {
  await core?.close();
  await drop?.();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(buildDir, { recursive: true, force: true });
});

async function adminText(
  args: string[],
  env: Record<string, string> = { DATABASE_URL: databaseUrl },
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(buildDir, 'admin.js'), ...args], {
      env: { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dataDir, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

async function admin(...args: string[]): Promise<{ code: number; out: unknown; err: string }> {
  const { code, stdout, stderr } = await adminText(args);
  return { code, out: code === 0 ? JSON.parse(stdout) : null, err: stderr };
}

async function status(key: string): Promise<number> {
  // The key is checked by the same AuthService the server uses, its cache emptied (the CLI changed the key).
  core.services.auth.forget();
  try {
    await core.services.auth.authenticate(`Bearer ${key}`);
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
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
    expect(JSON.parse(unknown.err)).toEqual({
      error: 'unknown command "team explode" (`npm run --silent admin -- help` lists them)',
    });
    const badLimit = await admin('key', 'create', '--team', 'team_x', '--spending-limit-usd', 'lots');
    expect(badLimit.code).toBe(2);
    const missingTeam = await admin('key', 'create', '--team', 'team_nope');
    expect(missingTeam.code).toBe(1);
    expect(JSON.parse(missingTeam.err).error).toMatch(/not found/);
  }, 60_000);
});

describe('admin CLI key restrictions', () => {
  it('key create --environments restricts the key to those feature-flag environments of its team', async () => {
    const teamId = ((await admin('team', 'create', '--name', 'flags')).out as { team_id: string }).team_id;
    const actor = { teamId, keyId: 'key_admin' };
    const envA = (await core.services.featureFlags.createEnvironment({ actor }, { name: 'a' })).id;
    const envB = (await core.services.featureFlags.createEnvironment({ actor }, { name: 'b' })).id;
    const restricted = await admin('key', 'create', '--team', teamId, '--environments', `${envA},${envB}`);
    expect(restricted.out).toEqual({
      key_id: expect.stringMatching(/^key_/),
      secret: expect.stringMatching(/^svc_sk_/),
      environment_ids: [envA, envB],
    });
    const listed = (await admin('key', 'list', '--team', teamId)).out as { environment_ids: string[] | null }[];
    expect(listed.map((key) => key.environment_ids)).toEqual([[envA, envB]]);

    const other = ((await admin('team', 'create', '--name', 'elsewhere')).out as { team_id: string }).team_id;
    const foreign = await admin('key', 'create', '--team', other, '--environments', envA);
    expect(foreign.code).toBe(1);
    expect(JSON.parse(foreign.err).error).toContain(`no environment ${envA}`);
    const empty = await admin('key', 'create', '--team', teamId, '--environments', '');
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.err).error).toMatch(/environments/);
  }, 60_000);
});

describe('admin CLI help and key list', () => {
  it('explains every command with help, --help or help <command>, without needing a database', async () => {
    const noDatabase = { DATABASE_URL: '' };
    const help = await adminText(['help'], noDatabase);
    expect(help.code).toBe(0);
    for (const usage of [
      'team create --name N',
      'team list',
      'team suspend --team T [--webhooks-only]',
      'team unsuspend --team T',
      'team billing --team T --card on|off',
      'key create --team T [--publishable] [--no-webhooks] [--spending-limit-usd D] [--environments ffe_a,ffe_b]',
      'key list --team T',
      'key revoke --key K',
    ])
      expect(help.stdout).toContain(`\n  ${usage}\n`);
    expect((await adminText(['--help'], noDatabase)).stdout).toBe(help.stdout);

    const one = await adminText(['key', 'list', '--help'], noDatabase);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('key list --team T');
    expect(one.stdout).not.toContain('team create');
    expect((await adminText(['help', 'key', 'list'], noDatabase)).stdout).toBe(one.stdout);

    const none = await adminText([], noDatabase);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('key list --team T');
  }, 60_000);

  it("lists a team's keys with kind, limit, created and revoked times, and never a secret", async () => {
    const teamId = ((await admin('team', 'create', '--name', 'listing')).out as { team_id: string }).team_id;
    const limited = (await admin('key', 'create', '--team', teamId, '--spending-limit-usd', '12.50')).out as {
      key_id: string;
      secret: string;
    };
    const publishable = (await admin('key', 'create', '--team', teamId, '--publishable', '--no-webhooks')).out as {
      key_id: string;
      secret: string;
    };
    await admin('key', 'revoke', '--key', limited.key_id);

    const listed = await adminText(['key', 'list', '--team', teamId]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        key_id: limited.key_id,
        kind: 'secret',
        webhooks_allowed: true,
        spending_limit_usd: '12.5',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        revoked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        environment_ids: null,
      },
      {
        key_id: publishable.key_id,
        kind: 'publishable',
        webhooks_allowed: false,
        spending_limit_usd: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        revoked_at: null,
        environment_ids: null,
      },
    ]);
    for (const secret of [limited.secret, publishable.secret]) expect(listed.stdout).not.toContain(secret);
    expect(listed.stdout).not.toMatch(/svc_[sp]k_/);

    const missing = await adminText(['key', 'list', '--team', 'team_nope']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr).error).toMatch(/not found/);
    expect((await adminText(['key', 'list'])).code).toBe(2);
  }, 60_000);
});
