import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { findFreePort } from '@svc/db';
import { exited, StartRuns, until as untilStarted, type StartedStack } from './start.testing.js';

/** `npm start` as a person runs it (without the console: scripts/first-start.test.ts builds and runs it). */
const runs = new StartRuns();
const dataDir = runs.dataDir;
const start = (port: number, options: { detached?: boolean; viaNpm?: boolean } = {}) => runs.start(port, options);

afterAll(() => runs.cleanUp());

const until = (check: () => boolean, what: string, child: StartedStack['child'], stderr: () => string) =>
  untilStarted(check, what, { child, stderr });

async function admin(...args: string[]): Promise<unknown> {
  const { code, stdout, stderr } = await runs.admin(...args);
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout);
}

describe('npm start (local mode)', () => {
  it('prints the key and its ID last, keeps request logs quiet, and a second start leaves the running one alone', async () => {
    const port = await findFreePort();
    const first = start(port);
    await until(() => /^Ready\.$/m.test(first.stdout()), 'Ready.', first.child, first.stderr);

    // The one-time key and its ID are the last lines above Ready., after the URLs.
    const lines = first.stdout().trimEnd().split('\n');
    expect(lines.at(-1)).toBe('Ready.');
    expect(lines.at(-4)).toMatch(/^Health {8}http:\/\/localhost:\d+\/healthz$/);
    expect(lines.at(-3)).toMatch(/^Local team key \(shown once, store it\): svc_sk_\S+$/);
    expect(lines.at(-2)).toMatch(
      /^Local team key ID: key_\S+ \(revoke it with: npm run --silent admin -- key revoke --key key_\S+\)$/,
    );
    const secret = lines.at(-3)!.split(': ')[1]!;
    const keyId = /key_\S+/.exec(lines.at(-2)!)![0];

    // Requests do not flood the terminal.
    const api = `http://127.0.0.1:${port}/v1/tenants`;
    for (let i = 0; i < 3; i += 1)
      expect((await fetch(api, { headers: { Authorization: `Bearer ${secret}` } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(first.stdout().trimEnd().split('\n').at(-1)).toBe('Ready.');
    expect(first.stderr()).not.toContain('request completed');

    // A second start refuses in one line and leaves the first one's Postgres alone.
    const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
    const postmaster = readFileSync(pidFile, 'utf8');
    const second = start(await findFreePort());
    expect(await exited(second.child)).toBe(1);
    expect(second.stderr()).toBe(
      `npm start: the data directory ${dataDir} is in use by process ${first.child.pid}: stop that one first, or set SVC_DATA_DIR to another directory\n`,
    );
    expect(readFileSync(pidFile, 'utf8')).toBe(postmaster);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

    // The printed key ID is the key's, and revoking it works.
    expect(
      await admin('key', 'list', '--team', ((await admin('team', 'list')) as Array<{ team_id: string }>)[0]!.team_id),
    ).toEqual([expect.objectContaining({ key_id: keyId, kind: 'secret', revoked_at: null })]);
    await admin('key', 'revoke', '--key', keyId);
    expect((await fetch(api, { headers: { Authorization: `Bearer ${secret}` } })).status).toBe(401);

    first.child.kill('SIGTERM');
    expect(await exited(first.child)).toBe(0);
    expect(existsSync(pidFile)).toBe(false);
  }, 180_000);

  it('starts over a stale pid file left by a Postgres that was killed', async () => {
    // A pid that belonged to a process which has exited.
    const gone = spawn(process.execPath, ['-e', '0']);
    await exited(gone);
    writeFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), `${gone.pid}\n${path.join(dataDir, 'pg')}\n`);
    const again = start(await findFreePort());
    await until(() => /^Ready\.$/m.test(again.stdout()), 'Ready.', again.child, again.stderr);
    // The earlier key was revoked above: it says so, and how to make another.
    expect(again.stdout()).toMatch(
      /^Local team key: none is active; `npm run --silent admin -- key create --team team_\S+` makes another\nReady\.$/m,
    );
    again.child.kill('SIGTERM');
    expect(await exited(again.child)).toBe(0);
  }, 120_000);

  it('stops cleanly on Ctrl-C: exit code 0, nothing alarming printed, Postgres down', async () => {
    // In a process group of its own, as a shell runs it: a terminal's Ctrl-C sends SIGINT to the whole group. Through
    // npm, as the README says: npm exits 130 when its script's shell dies of the SIGINT (package.json's start script
    // execs tsx, so no shell stays between them), and it must not return before Postgres is down.
    const run = start(await findFreePort(), { detached: true, viaNpm: true });
    await until(() => /^Ready\.$/m.test(run.stdout()), 'Ready.', run.child, run.stderr);
    // Work in flight and idle connections in every pool when the signal comes.
    const port = Number(/localhost:(\d+)\/healthz/.exec(run.stdout())![1]);
    await Promise.all(Array.from({ length: 10 }, () => fetch(`http://127.0.0.1:${port}/readyz`)));
    process.kill(-run.child.pid!, 'SIGINT');
    expect(await exited(run.child)).toBe(0);
    const output = run.stdout() + run.stderr();
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toMatch(/error|57P01/i);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 120_000);
});
