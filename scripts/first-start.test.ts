import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { findFreePort } from '@svc/db';
import { CONSOLE_DIR } from './console-process.js';
import { ROOT } from './local-runtime.js';
import { childRunning, type StackChild } from './stack-processes.js';
import { exited, StartRuns, until } from './start.testing.js';

/**
 * A first `npm start`: the console builds (SVC_CONSOLE_REBUILD=1 makes every start one) while Postgres, the server
 * and the worker start. The builds are real `next build` runs of apps/console, a minute or more each.
 */
const runs = new StartRuns();
afterAll(() => runs.cleanUp());

/** The processes whose working directory is the console's: `next build`, its workers, `next start`. */
function processesInConsoleDir(): number[] {
  const consoleDir = path.resolve(CONSOLE_DIR);
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === consoleDir;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The lock file a running `next build` holds open (Next.js' lockDistDir). */
const BUILD_LOCK = path.join(CONSOLE_DIR, '.next/lock');

const buildRecord = (): StackChild | undefined =>
  (
    JSON.parse(readFileSync(path.join(runs.dataDir, 'processes.json'), 'utf8')) as { children: StackChild[] }
  ).children.find((child) => child.name === 'the console build');

describe('a first npm start, while the console builds', () => {
  it('answers /healthz, the admin CLI works, it tells the time taken, and a SIGKILL of the job stops the build', async () => {
    const port = await findFreePort();
    const run = runs.start(port, {
      detached: true,
      consolePort: await findFreePort(),
      // A progress line a second: a build that takes a few seconds only (its cache is warm) still shows two.
      env: { SVC_CONSOLE_REBUILD: '1', SVC_CONSOLE_BUILD_PROGRESS_SECONDS: '1' },
    });
    const healthy = () =>
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.status === 200,
        () => false,
      );
    // Whatever fails below, the job ends with this test (its guard then stops what the start left).
    onTestFinished(() => {
      try {
        process.kill(-run.child.pid!, 'SIGKILL');
      } catch {
        // killed below already
      }
    });
    // A script's "wait for /healthz, then use the admin CLI".
    await until(healthy, '/healthz', run, 180_000);
    const created = await runs.admin('team', 'create', '--name', 'scripted');
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ team_id: expect.stringMatching(/^team_/), name: 'scripted' });
    // All that happened while the console was still building.
    expect(run.stdout()).toContain('Building the console (first start, or its sources changed)');
    expect(run.stdout()).not.toMatch(/^Ready\.$/m);

    // Progress on the real clock: a line every second here (5 s by default) with the seconds taken so far.
    // (A busy machine runs timers late: the seconds are what was taken, not multiples of the interval.)
    const progress = () =>
      [...run.stdout().matchAll(/^Building the console\.\.\. (\d+) s$/gm)].map((m) => Number(m[1]));
    await until(() => progress().length >= 2, 'two progress lines', run, 60_000);
    const [first, second] = progress();
    expect(first).toBeGreaterThanOrEqual(1);
    expect(second).toBeGreaterThanOrEqual(first!);
    const build = buildRecord();
    expect(build).toMatchObject({ group: true, signal: 'SIGTERM' });
    expect(childRunning(build!)).toBe(true);
    expect(run.stdout()).not.toMatch(/^Ready\.$/m);

    // Killed hard mid-build, the whole job (npm, tsx, the start): the guard stops the build and its workers.
    process.kill(-run.child.pid!, 'SIGKILL');
    const deadline = Date.now() + 30_000;
    while ((childRunning(build!) || processesInConsoleDir().length > 0) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(childRunning(build!)).toBe(false);
    expect(processesInConsoleDir()).toEqual([]);
  }, 300_000);

  it('stops the build on Ctrl-C (which reaches only the start: the build has a group of its own), exit code 0', async () => {
    const run = runs.start(await findFreePort(), {
      detached: true,
      consolePort: await findFreePort(),
      // A progress line a second: a build that takes a few seconds only (its cache is warm) still shows two.
      env: { SVC_CONSOLE_REBUILD: '1', SVC_CONSOLE_BUILD_PROGRESS_SECONDS: '1' },
    });
    await until(() => /^Building the console\.\.\. \d+ s$/m.test(run.stdout()), 'a progress line', run, 120_000);
    const build = buildRecord();
    expect(childRunning(build!)).toBe(true);
    process.kill(-run.child.pid!, 'SIGINT');
    expect(await exited(run.child)).toBe(0);
    // Stopped by the start itself, before it exited: nothing is left for the guard.
    expect(childRunning(build!)).toBe(false);
    expect(processesInConsoleDir()).toEqual([]);
    expect(run.stderr()).not.toMatch(/error/i);
  }, 180_000);

  it('stops a `next build` that an earlier start left running, then runs its own build, which takes the lock', async () => {
    // Nothing else builds the console now (the test above stops its job).
    const quiet = Date.now() + 30_000;
    while (processesInConsoleDir().length > 0 && Date.now() < quiet) await new Promise((r) => setTimeout(r, 200));
    expect(processesInConsoleDir()).toEqual([]);
    // As a start killed before builds ran in a group of their own could leave it (its parent is not a start).
    const left = spawn(process.execPath, [path.join(ROOT, 'node_modules/next/dist/bin/next'), 'build'], {
      cwd: CONSOLE_DIR,
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', SVC_CONSOLE_BUILD_FOR_START: '1' },
    });
    onTestFinished(() => {
      try {
        process.kill(-left.pid!, 'SIGKILL');
      } catch {
        // stopped by the start, as it should be
      }
    });
    const lockHeldBy = (pid: number) => {
      try {
        return readdirSync(`/proc/${pid}/fd`).some((fd) => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`) === BUILD_LOCK;
          } catch {
            return false;
          }
        });
      } catch {
        return false; // the process has ended
      }
    };
    // Until it holds the build's lock file.
    const lockDeadline = Date.now() + 60_000;
    while (Date.now() < lockDeadline) {
      if (left.exitCode !== null || left.signalCode !== null) throw new Error('the left-over build ended by itself');
      if (lockHeldBy(left.pid!)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const run = runs.start(await findFreePort(), {
      detached: true,
      consolePort: await findFreePort(),
      env: { SVC_CONSOLE_REBUILD: '1', SVC_CONSOLE_BUILD_PROGRESS_SECONDS: '1' },
    });
    onTestFinished(() => {
      try {
        process.kill(-run.child.pid!, 'SIGKILL');
      } catch {
        // stopped below already
      }
    });
    // The start's own build holds the lock: the left-over one no longer does, and the new one was not refused
    // ("Another next build process is already running" ends a build that finds the lock taken). Whether that build
    // then finishes and the console starts is what every first start shows (the test above, the e2e run's start).
    await until(
      () => {
        let build: StackChild | undefined;
        try {
          build = buildRecord();
        } catch {
          return false; // no record yet, or one being written
        }
        return build !== undefined && build.pid !== left.pid && childRunning(build) && lockHeldBy(build.pid);
      },
      "the start's build holding the lock",
      run,
      120_000,
    );
    expect(run.stderr()).toContain(
      `Stopping the console build (process ${left.pid}), left running by an earlier start`,
    );
    expect(run.stderr()).not.toContain('Another next build process is already running');
    expect(left.exitCode !== null || left.signalCode !== null).toBe(true);

    process.kill(-run.child.pid!, 'SIGINT');
    expect(await exited(run.child)).toBe(0);
    expect(processesInConsoleDir()).toEqual([]);
  }, 240_000);
});
