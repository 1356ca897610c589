import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateEventTypeInput,
  CreateSourceInput,
  CreateTenantInput,
  openCore,
  parseInput,
  systemClock,
  testCoreOptions,
  type OpenedCore,
} from '@svc/core';
import { createTestDatabase } from '@svc/db';
import { runAdmin } from './admin-cli.js';
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

interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI as the image runs it: the built bundle under plain node, one process per command. */
async function spawnedAdminText(args: string[], env: Record<string, string>): Promise<AdminRun> {
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

/**
 * One command through runAdmin, the function the program calls with its arguments, environment and streams: the
 * same parsing, output and exit codes without a process start per command (a spawned command took about 1.4 s of
 * this file's 95 s). The tests marked "spawned" run the bundle itself.
 */
async function adminText(
  args: string[],
  env: Record<string, string> = { DATABASE_URL: databaseUrl },
): Promise<AdminRun> {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(args, {
    env: { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dataDir, ...env },
    out: (text) => (stdout += text),
    err: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
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
    expect(team.out).toEqual({ team_id: expect.stringMatching(/^team_/), name: 'acme', payment_card: true });
    const teamId = (team.out as { team_id: string }).team_id;
    expect((await admin('team', 'list')).out).toContainEqual(
      expect.objectContaining({ team_id: teamId, name: 'acme' }),
    );

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

    expect((await admin('key', 'revoke', '--key', keyId)).out).toEqual({
      key_id: keyId,
      revoked: true,
      revoked_at: expect.stringMatching(/^\d{4}-/),
    });
    expect(await status(secret)).toBe(401);
  }, 120_000);

  it('spawned: the built program prints JSON and exits 0, 1 or 2 as runAdmin answers', async () => {
    const withDatabase = { DATABASE_URL: databaseUrl };
    const created = await spawnedAdminText(['team', 'create', '--name', 'spawned'], withDatabase);
    expect(created.code).toBe(0);
    const team = JSON.parse(created.stdout) as { team_id: string };
    expect(team).toEqual({ team_id: expect.stringMatching(/^team_/), name: 'spawned', payment_card: true });
    const listed = await spawnedAdminText(['team', 'list'], withDatabase);
    expect(JSON.parse(listed.stdout)).toContainEqual(expect.objectContaining({ team_id: team.team_id }));

    const unknown = await spawnedAdminText(['team', 'explode'], withDatabase);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(unknown.stderr)).toEqual(JSON.parse((await adminText(['team', 'explode'])).stderr));
    const missing = await spawnedAdminText(['key', 'create', '--team', 'team_nope'], withDatabase);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr).error).toMatch(/not found/);
    const help = await spawnedAdminText(['help'], { DATABASE_URL: '' });
    expect(help.code).toBe(0);
    expect(help.stdout).toBe((await adminText(['help'], { DATABASE_URL: '' })).stdout);
    expect((await spawnedAdminText([], { DATABASE_URL: '' })).code).toBe(2);
  }, 120_000);

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
  }, 120_000);
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
  }, 120_000);
});

describe('admin CLI help and key list', () => {
  it('explains every command with help, --help or help <command>, without needing a database', async () => {
    const noDatabase = { DATABASE_URL: '' };
    const help = await adminText(['help'], noDatabase);
    expect(help.code).toBe(0);
    for (const usage of [
      'team create --name N [--no-card] [--allow-duplicate]',
      'team list',
      'team rename --team T --name N [--allow-duplicate]',
      'team delete --team T',
      'team suspend --team T [--webhooks-only]',
      'team unsuspend --team T',
      'team billing --team T --card on|off',
      'key create --team T [--label L] [--publishable] [--no-webhooks] [--spending-limit-usd D] [--environments ffe_a,ffe_b]',
      'key list --team T',
      'key label --key K (--label L | --clear)',
      'key rotate --key K [--overlap-minutes M]',
      'key revoke --key K',
      'session list --team T',
      'session revoke (--session S | --team T)',
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
  }, 120_000);

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
        label: null,
        kind: 'secret',
        webhooks_allowed: true,
        spending_limit_usd: '12.5',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        revoked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        environment_ids: null,
      },
      {
        key_id: publishable.key_id,
        label: null,
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
  }, 120_000);
});

interface Issued {
  key_id: string;
  secret: string;
}
const teamOf = async (...args: string[]) =>
  ((await admin('team', 'create', ...args)).out as { team_id: string }).team_id;

describe('admin CLI teams', () => {
  it('lists each team with its suspension, payment card and usable keys; a new team has a card unless --no-card', async () => {
    const withCard = await teamOf('--name', 'listed-card');
    const withoutCard = await admin('team', 'create', '--name', 'listed-no-card', '--no-card');
    expect(withoutCard.out).toEqual({ team_id: expect.any(String), name: 'listed-no-card', payment_card: false });
    const withoutCardId = (withoutCard.out as { team_id: string }).team_id;
    const first = (await admin('key', 'create', '--team', withCard)).out as Issued;
    await admin('key', 'create', '--team', withCard);
    await admin('key', 'revoke', '--key', first.key_id);
    await admin('team', 'suspend', '--team', withoutCardId, '--webhooks-only');

    const listed = (await admin('team', 'list')).out as Array<Record<string, unknown>>;
    expect(listed.find((team) => team['team_id'] === withCard)).toEqual({
      team_id: withCard,
      name: 'listed-card',
      suspended: false,
      webhooks_suspended: false,
      payment_card: true,
      active_keys: 1,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(listed.find((team) => team['team_id'] === withoutCardId)).toMatchObject({
      webhooks_suspended: true,
      payment_card: false,
      active_keys: 0,
    });
  }, 120_000);

  it('refuses a name another team has unless --allow-duplicate, and renames', async () => {
    const original = await teamOf('--name', 'dup-name');
    const again = await admin('team', 'create', '--name', 'dup-name');
    expect(again.code).toBe(1);
    expect(JSON.parse(again.err).error).toBe(
      `a team named "dup-name" already exists (${original}): pick another name, or pass --allow-duplicate`,
    );
    const twin = await teamOf('--name', 'dup-name', '--allow-duplicate');
    expect(twin).not.toBe(original);

    const clash = await admin('team', 'rename', '--team', twin, '--name', 'dup-name');
    expect(clash.code).toBe(1);
    expect(JSON.parse(clash.err).error).toContain('already exists');
    expect((await admin('team', 'rename', '--team', twin, '--name', 'dup-renamed')).out).toEqual({
      team_id: twin,
      name: 'dup-renamed',
    });
    expect((await admin('team', 'list')).out).toContainEqual(
      expect.objectContaining({ team_id: twin, name: 'dup-renamed' }),
    );
    expect((await admin('team', 'rename', '--team', 'team_nope', '--name', 'x')).code).toBe(1);
  }, 120_000);

  it('deletes a team that holds only keys and sessions, and refuses one that holds data, naming it', async () => {
    const empty = await teamOf('--name', 'deletable');
    const key = (await admin('key', 'create', '--team', empty)).out as Issued;
    await core.services.consoleSessions.createSession(key.secret);
    expect(await status(key.secret)).toBe(200);
    expect((await admin('team', 'delete', '--team', empty)).out).toEqual({
      team_id: empty,
      deleted: true,
      keys_deleted: 1,
    });
    expect(await status(key.secret)).toBe(401);
    expect((await admin('team', 'list')).out).not.toContainEqual(expect.objectContaining({ team_id: empty }));

    const busy = await teamOf('--name', 'busy');
    const busyKey = (await admin('key', 'create', '--team', busy)).out as Issued;
    const ctx = { actor: { teamId: busy, keyId: busyKey.key_id } };
    await core.services.tenants.createTenant(ctx, parseInput(CreateTenantInput, { external_id: 'x', name: 'X' }));
    const refused = await admin('team', 'delete', '--team', busy);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.err).error).toBe(
      `team ${busy} holds data (tenant_external_id_claims, tenants): it cannot be deleted; suspend it instead`,
    );
    expect(await status(busyKey.secret)).toBe(200);
    expect((await admin('team', 'delete', '--team', 'team_nope')).code).toBe(1);
  }, 120_000);
});

describe('admin CLI keys', () => {
  it('labels keys: on create, in key list and the usage report, changed or cleared later', async () => {
    const teamId = await teamOf('--name', 'labels');
    const key = (await admin('key', 'create', '--team', teamId, '--label', 'checkout service')).out as Issued;
    const labels = async () =>
      ((await admin('key', 'list', '--team', teamId)).out as Array<{ label: string | null }>).map((k) => k.label);
    expect(await labels()).toEqual(['checkout service']);
    const usage = await core.services.usage.getUsage({ actor: { teamId, keyId: key.key_id } }, {});
    expect(usage.keys.map((k) => [k.keyId, k.label])).toEqual([[key.key_id, 'checkout service']]);

    expect((await admin('key', 'label', '--key', key.key_id, '--label', 'billing')).out).toEqual({
      key_id: key.key_id,
      label: 'billing',
    });
    expect(await labels()).toEqual(['billing']);
    await admin('key', 'label', '--key', key.key_id, '--clear');
    expect(await labels()).toEqual([null]);
    expect((await admin('key', 'label', '--key', key.key_id)).code).toBe(2);
    const tooLong = await admin('key', 'create', '--team', teamId, '--label', 'x'.repeat(101));
    expect(tooLong.code).toBe(1);
    expect(JSON.parse(tooLong.err).error).toMatch(/label/);
  }, 120_000);

  it('rotates a key: a new secret with the same settings and sources, the old one revoked now or after an overlap', async () => {
    const teamId = await teamOf('--name', 'rotation');
    const old = (
      await admin('key', 'create', '--team', teamId, '--label', 'api', '--spending-limit-usd', '5', '--no-webhooks')
    ).out as Issued;
    const now = (await admin('key', 'rotate', '--key', old.key_id)).out as Issued & Record<string, unknown>;
    expect(now).toEqual({
      key_id: expect.stringMatching(/^key_/),
      secret: expect.stringMatching(/^svc_sk_/),
      replaced_key_id: old.key_id,
      replaced_key_revoked_at: expect.stringMatching(/^\d{4}-/),
      sources_moved: 0,
    });
    const listed = (await admin('key', 'list', '--team', teamId)).out as Array<Record<string, unknown>>;
    expect(listed[1]).toMatchObject({
      key_id: now.key_id,
      label: 'api',
      webhooks_allowed: false,
      spending_limit_usd: '5',
      revoked_at: null,
    });
    expect(listed[0]!['revoked_at']).toBe(now['replaced_key_revoked_at']);

    // With an overlap both keys work until the old one's time; sources it paid for move to the new key.
    const current = (await admin('key', 'create', '--team', teamId)).out as Issued;
    const ctx = { actor: { teamId, keyId: current.key_id } };
    const tenant = await core.services.tenants.createTenant(
      ctx,
      parseInput(CreateTenantInput, { external_id: 't', name: 'T' }),
    );
    await core.services.eventTypes.createEventType(ctx, parseInput(CreateEventTypeInput, { name: 'order.paid' }));
    const source = await core.services.sources.createSource(
      ctx,
      parseInput(CreateSourceInput, {
        tenant_id: tenant.id,
        name: 'shop',
        verification: { kind: 'bearer', secret: 'rotation-secret-0123456789abcdef' },
        event_type: 'order.paid',
      }),
    );
    const rotated = (await admin('key', 'rotate', '--key', current.key_id, '--overlap-minutes', '60')).out as Issued &
      Record<string, unknown>;
    expect(rotated['sources_moved']).toBe(1);
    expect(Date.parse(rotated['replaced_key_revoked_at'] as string) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(await status(current.secret)).toBe(200);
    expect(await status(rotated.secret)).toBe(200);
    const [moved] = (await core.services.db.query(`SELECT billing_key_id FROM sources WHERE id = $1`, [
      source.source.id,
    ])) as {
      billing_key_id: string;
    }[];
    expect(moved!.billing_key_id).toBe(rotated.key_id);
    const twice = await admin('key', 'rotate', '--key', current.key_id);
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.err).error).toContain('already being rotated out');

    // Revoking ends the overlap at once; revoking again says so and changes nothing.
    const revoked = await admin('key', 'revoke', '--key', current.key_id);
    expect(revoked.out).toEqual({ key_id: current.key_id, revoked: true, revoked_at: expect.any(String) });
    expect(await status(current.secret)).toBe(401);
    const again = await admin('key', 'revoke', '--key', current.key_id);
    expect(again.code).toBe(0);
    expect(again.out).toEqual({
      key_id: current.key_id,
      revoked: true,
      revoked_at: (revoked.out as { revoked_at: string }).revoked_at,
      already_revoked: true,
    });
    expect(again.err).toContain(`key ${current.key_id} was already revoked at`);
    expect((await admin('key', 'revoke', '--key', 'key_nope')).code).toBe(1);
    expect((await admin('key', 'rotate', '--key', old.key_id, '--overlap-minutes', 'soon')).code).toBe(2);
  }, 120_000);
});

describe('admin CLI console sessions', () => {
  it("lists a team's console sessions and signs one or all of them out", async () => {
    const teamId = await teamOf('--name', 'sessions');
    const key = (await admin('key', 'create', '--team', teamId)).out as Issued;
    const first = await core.services.consoleSessions.createSession(key.secret);
    const second = await core.services.consoleSessions.createSession(key.secret);
    const listed = (await admin('session', 'list', '--team', teamId)).out as Array<Record<string, unknown>>;
    expect(listed).toHaveLength(2);
    expect(listed[0]).toEqual({
      session_id: expect.stringMatching(/^cs_/),
      key_id: key.key_id,
      created_at: expect.any(String),
      last_seen_at: expect.any(String),
      expires_at: expect.any(String),
      revoked_at: null,
      live: true,
    });
    const text = (await adminText(['session', 'list', '--team', teamId])).stdout;
    for (const token of [first.token, second.token]) expect(text).not.toContain(token);

    const sessionId = listed[0]!['session_id'] as string;
    expect((await admin('session', 'revoke', '--session', sessionId)).out).toMatchObject({ revoked: true });
    const again = await admin('session', 'revoke', '--session', sessionId);
    expect(again.out).toMatchObject({ session_id: sessionId, already_revoked: true });
    expect(again.err).toContain('already revoked');
    const live = async () => {
      const results = await Promise.allSettled(
        [first, second].map((session) => core.services.consoleSessions.authenticateSession(session.token)),
      );
      return results.filter((result) => result.status === 'fulfilled').length;
    };
    expect(await live()).toBe(1);
    expect((await admin('session', 'revoke', '--team', teamId)).out).toEqual({ team_id: teamId, sessions_revoked: 1 });
    expect(await live()).toBe(0);
    expect((await admin('session', 'revoke')).code).toBe(2);
    expect((await admin('session', 'revoke', '--session', 'cs_nope')).code).toBe(1);
  }, 120_000);
});

describe('npm run admin', () => {
  it('runs the built CLI, rebuilding it only when a source it was built from is newer', async () => {
    const ownBuild = path.join(ROOT, '.tmp', 'admin-cli');
    const launch = () =>
      run(process.execPath, [path.join(ROOT, 'scripts/admin-launcher.js'), 'team', 'list'], {
        env: { ...process.env, DATABASE_URL: databaseUrl, SVC_DATA_DIR: dataDir },
      });
    // dist/ is used instead when `npm run build` made it from these sources: move it out of the way if so.
    const hasDist = existsSync(path.join(ROOT, 'dist', 'inputs.json'));
    if (hasDist) renameSync(path.join(ROOT, 'dist'), path.join(ROOT, '.tmp', `dist-aside-${process.pid}`));
    try {
      const first = await launch();
      expect(JSON.parse(first.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'acme' })]));
      const bundle = path.join(ownBuild, 'admin.js');
      const inputs = JSON.parse(readFileSync(path.join(ownBuild, 'inputs.json'), 'utf8')) as string[];
      expect(inputs).toEqual(expect.arrayContaining(['scripts/admin.ts', 'packages/core/src/teams/team.service.ts']));
      const builtAt = statSync(bundle).mtimeMs;
      await launch();
      expect(statSync(bundle).mtimeMs).toBe(builtAt);

      // A bundle older than its sources is rebuilt before it runs (its output stays JSON on stdout).
      utimesSync(bundle, new Date(0), new Date(0));
      const rebuilt = await launch();
      expect(JSON.parse(rebuilt.stdout)).toEqual(JSON.parse(first.stdout));
      expect(statSync(bundle).mtimeMs).toBeGreaterThanOrEqual(builtAt);
      expect(rebuilt.stderr).toContain('Built admin');
    } finally {
      if (hasDist) renameSync(path.join(ROOT, '.tmp', `dist-aside-${process.pid}`), path.join(ROOT, 'dist'));
    }
  }, 120_000);
});
