/**
 * The console in `npm start`: built when its sources changed since the last build (or when there is none), then run
 * with `next start` in a session of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { consoleBuildId } from '../apps/console/build-id.js';
import { ROOT } from './local-runtime.js';
import type { StackGuard } from './stack-processes.js';

export const CONSOLE_DIR = path.join(ROOT, 'apps/console');
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 10_000;

/** A reason not to start, explained in one line. */
export class StartError extends Error {}

function nextCommand(...args: string[]): [string, string[]] {
  return [process.execPath, [path.join(ROOT, 'node_modules/next/dist/bin/next'), ...args]];
}

/**
 * True when apps/console/.next holds a build of the sources as they are now: every `next build` takes the hash of
 * the console's sources and the lockfile as its build ID (apps/console/next.config.ts). SVC_CONSOLE_REBUILD=1
 * builds anyway.
 */
export function consoleBuildIsCurrent(env: NodeJS.ProcessEnv): boolean {
  if (env['SVC_CONSOLE_REBUILD'] === '1') return false;
  const buildIdFile = path.join(CONSOLE_DIR, '.next/BUILD_ID');
  return existsSync(buildIdFile) && readFileSync(buildIdFile, 'utf8').trim() === consoleBuildId(CONSOLE_DIR);
}

export interface RunningBuild {
  /** Resolves when the build succeeded; rejects (its output printed) when it failed or was stopped. */
  done: Promise<void>;
  /** Stops the build and its workers (SIGTERM to its process group, SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/** How often a first start says the console is still building, with the time it has taken so far. */
export const BUILD_PROGRESS_MS = 5_000;

/**
 * `next build`, its output kept back unless it fails (the type check is left to `npm run typecheck`). It runs in a
 * process group of its own, which the guard stops whole if this process is killed: `next build` has workers, and
 * one left running makes the next build refuse ("Another next build process is already running"). A terminal's
 * Ctrl-C does not reach the group; `stop` (which the start's own stop calls) does. `progress` is called every
 * `progressEveryMs` (BUILD_PROGRESS_MS by default) with the seconds taken so far.
 */
export function buildConsole(
  guard: StackGuard,
  progress: (seconds: number) => void,
  progressEveryMs = BUILD_PROGRESS_MS,
): RunningBuild {
  const [cmd, args] = nextCommand('build');
  const build = spawn(cmd, args, {
    cwd: CONSOLE_DIR,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', SVC_CONSOLE_BUILD_FOR_START: '1' },
  });
  guard.track(build, 'the console build', 'SIGTERM', { group: true });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  build.stdout!.on('data', keep);
  build.stderr!.on('data', keep);
  const began = Date.now();
  const ticker = setInterval(() => progress(Math.round((Date.now() - began) / 1000)), progressEveryMs);
  const exited = new Promise<number | null>((resolve, reject) => {
    build.once('error', reject);
    build.once('exit', (exitCode) => resolve(exitCode));
  }).finally(() => clearInterval(ticker));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-build.pid!, signal);
    } catch {
      // the group has ended
    }
  };
  let stopped = false;
  return {
    done: exited.then((code) => {
      if (code === 0) return;
      if (stopped) throw new StartError('the console build was stopped');
      process.stderr.write(output);
      throw new StartError('the console build failed (see above)');
    }),
    async stop() {
      stopped = true;
      if (build.pid === undefined) return;
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), STOP_TIMEOUT_MS);
      await exited.catch(() => undefined);
      clearTimeout(timer);
      // Its workers leave with it; any that lingers does not outlive this.
      signalGroup('SIGKILL');
    },
  };
}

export interface RunningConsole {
  process: ChildProcess;
  /** SIGTERM, then SIGKILL if it has not exited after 10 s. */
  stop(): Promise<void>;
}

/** Starts `next start` and resolves once it answers HTTP; rejects if it exits first or takes too long. */
export async function startConsole(
  guard: StackGuard,
  options: { port: number; apiUrl: string; env: NodeJS.ProcessEnv },
): Promise<RunningConsole> {
  const [cmd, args] = nextCommand('start', '-p', String(options.port), '-H', '127.0.0.1');
  // Its banner is noise next to ours; its errors go to stderr, which stays visible.
  const child = spawn(cmd, args, {
    cwd: CONSOLE_DIR,
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...options.env, SVC_API_URL: options.apiUrl, NEXT_TELEMETRY_DISABLED: '1', PORT: String(options.port) },
  });
  guard.track(child, 'the console', 'SIGTERM');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running: RunningConsole = {
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
  const url = `http://127.0.0.1:${options.port}/`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new StartError('the console did not start (see above)');
    const answered = await fetch(url, { redirect: 'manual' }).then(
      async (response) => (await response.body?.cancel(), true),
      () => false,
    );
    if (answered) return running;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await running.stop();
  throw new StartError(`the console did not answer at ${url} within ${START_TIMEOUT_MS / 1000} s`);
}
