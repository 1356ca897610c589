/**
 * Runs `npm start` (scripts/start.ts) and the admin CLI as a person's shell does, for scripts/start.test.ts and
 * scripts/first-start.test.ts: each run gets a data directory of its own, and `cleanUp` stops what is still running
 * and removes the directory (and, as root, the cluster it links to).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './local-runtime.js';

export interface StartedStack {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
}

export interface StartOptions {
  /** In a process group of its own, as a shell runs a job (signals to -pid reach the whole job). */
  detached?: boolean;
  /** Run the console too, on this port (default: SVC_NO_CONSOLE=1). */
  consolePort?: number;
  env?: NodeJS.ProcessEnv;
  /** Through `npm start` (npm, then tsx), as the README says, instead of node and the tsx loader alone. */
  viaNpm?: boolean;
}

export class StartRuns {
  readonly tempDir = mkdtempSync(path.join(tmpdir(), 'svc-start-test-'));
  readonly dataDir = path.join(this.tempDir, 'data');
  private readonly children: ChildProcess[] = [];

  start(port: number, options: StartOptions = {}): StartedStack {
    let stdout = '';
    let stderr = '';
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      SVC_DATA_DIR: this.dataDir,
      ...(options.consolePort === undefined
        ? { SVC_NO_CONSOLE: '1' }
        : { CONSOLE_PORT: String(options.consolePort), SVC_NO_CONSOLE: '' }),
    };
    // As a person's shell has it: no NODE_ENV=test from vitest (Apollo Server, for one, behaves differently under it).
    for (const name of ['LOG_LEVEL', 'DATABASE_URL', 'SVC_LOCAL_SECRET_KEY', 'NODE_ENV']) delete env[name];
    Object.assign(env, options.env);
    const [command, args] = options.viaNpm
      ? ['npm', ['start']]
      : [process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/start.ts')]];
    const child = spawn(command, args, {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached ?? false,
    });
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    this.children.push(child);
    return { child, stdout: () => stdout, stderr: () => stderr };
  }

  /** The admin CLI as `npm run admin` runs it (the launcher and its built bundle): its exit code and output. */
  async admin(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [path.join(ROOT, 'scripts/admin-launcher.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, SVC_DATA_DIR: this.dataDir, DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return { code: await exited(child), stdout, stderr };
  }

  async cleanUp(): Promise<void> {
    for (const child of this.children)
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    // As root the cluster of a data directory the postgres user cannot reach lives elsewhere, behind a symlink.
    const cluster = path.join(this.dataDir, 'pg');
    if (lstatSync(cluster, { throwIfNoEntry: false })?.isSymbolicLink())
      rmSync(realpathSync(cluster), { recursive: true, force: true });
    rmSync(this.tempDir, { recursive: true, force: true });
  }
}

export const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

/** Waits for `check` (sync or async) to hold; fails at once, with its stderr, when the start exits first. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  run: Pick<StartedStack, 'child' | 'stderr'>,
  ms = 90_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    if (run.child.exitCode !== null)
      throw new Error(`npm start exited (${run.child.exitCode}) before ${what}: ${run.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}
