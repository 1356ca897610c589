import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The repository root (the processes run from it, and the bundles are built inside it to find node_modules). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const BUNDLES_PREFIX = 'fault-bundles-';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let bundles: Promise<string> | undefined;

/**
 * The production bundles of the server and the worker (`npm run build`'s dist/server.js and dist/worker.js), built
 * from the current sources once per test process into .tmp/fault-bundles-<pid>. A process started from them costs
 * a fraction of a tsx start, which compiled the server's graph each time (about 2 s of CPU per process, some 25
 * processes a run). Directories of test processes that are gone are removed first. The build runs as `npm run build`
 * does, as a process of its own: the worker's code never imports the repository's scripts (a layer above it).
 */
function productionBundles(): Promise<string> {
  bundles ??= (async () => {
    const tmp = path.join(ROOT, '.tmp');
    mkdirSync(tmp, { recursive: true });
    for (const name of readdirSync(tmp, { withFileTypes: true }).map((entry) => entry.name))
      if (name.startsWith(BUNDLES_PREFIX) && !isRunning(Number(name.slice(BUNDLES_PREFIX.length))))
        rmSync(path.join(tmp, name), { recursive: true, force: true });
    const dir = path.join(tmp, `${BUNDLES_PREFIX}${process.pid}`);
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'scripts/build.ts'), '--outdir', dir, '--only', 'server', '--only', 'worker'],
      { cwd: ROOT },
    );
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  })();
  return bundles;
}

export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string;
  /** Resolves when the output contains the text (rejects when the process exits first or after the time). */
  waitFor(text: string, ms?: number): Promise<void>;
  exited(): Promise<number | null>;
  /** kill -9 of this process only (by its pid). */
  kill9(): Promise<void>;
  /** SIGTERM, then SIGKILL when it has not stopped after the time. */
  stop(ms?: number): Promise<void>;
}

/** Every process a test file started, so that afterAll can kill whatever is still running. */
const started = new Set<ServiceProcess>();

/**
 * Starts a production entry point (the server or the worker) as a real child process, from the production bundle
 * under plain node as the image runs it, with only the environment given (plus PATH). The processes use the system
 * clock.
 */
export async function startServiceProcess(
  entry: 'server' | 'worker',
  env: Record<string, string>,
  name: string = entry,
): Promise<ServiceProcess> {
  const bundle = path.join(await productionBundles(), `${entry}.js`);
  let output = '';
  const child = spawn(process.execPath, ['--enable-source-maps', bundle], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    // Keep the output bounded: a long run logs a lot.
    output = (output + chunk.toString()).slice(-200_000);
    for (const listener of [...listeners]) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
      for (const listener of [...listeners]) listener();
    });
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const proc: ServiceProcess = {
    name,
    pid: child.pid!,
    child,
    output: () => output,
    waitFor(text, ms = 30_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (output.includes(text)) done(null);
          else if (!alive()) done(new Error(`${name} exited before "${text}":\n${output.slice(-3000)}`));
        };
        const timer = setTimeout(
          () => done(new Error(`${name}: no "${text}" within ${ms} ms:\n${output.slice(-3000)}`)),
          ms,
        );
        const done = (error: Error | null) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve();
        };
        listeners.add(check);
        check();
      });
    },
    exited: () => exit,
    async kill9() {
      if (alive()) process.kill(child.pid!, 'SIGKILL');
      await exit;
      started.delete(proc);
    },
    async stop(ms = 10_000) {
      if (alive()) {
        process.kill(child.pid!, 'SIGTERM');
        const timer = setTimeout(() => alive() && process.kill(child.pid!, 'SIGKILL'), ms);
        await exit;
        clearTimeout(timer);
      }
      started.delete(proc);
    },
  };
  started.add(proc);
  return proc;
}

/** The one line a server or a worker prints when its SVC_ENCRYPTION_KEY is not the database's (docs/upgrading.md). */
export const SEALING_KEY_REFUSAL =
  /^(server|worker) did not start: SVC_ENCRYPTION_KEY is not the key this database's secrets are sealed with \(this key's ID is [0-9a-f]{8}, the database's [0-9a-f]{8}\): start every process with the key the others use \(docs\/upgrading\.md\)$/;

/** What a process printed, line by line, but the loopback warning every process of a fault deployment prints. */
export function linesBesideLoopbackWarning(proc: ServiceProcess): string[] {
  return proc
    .output()
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('WARNING: loopback receivers are allowed'));
}

/** Kills every process this test file started that still runs (afterAll, and on failures). */
export async function killStartedProcesses(): Promise<void> {
  await Promise.all([...started].map((proc) => proc.kill9()));
}

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  ms = 30_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
