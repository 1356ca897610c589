import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FullConfig } from '@playwright/test';
import { admin } from './support/admin';
import { STACK_FILE_ENV, type StackInfo } from './support/stack';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The first start may run `next build`. */
const START_TIMEOUT_MS = 4 * 60_000;

/** Free ports chosen now, all held open together so they differ, then released for the stack. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => {
      const server = createServer();
      return new Promise<typeof server>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve(server));
      });
    }),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

async function answers(url: string): Promise<number | null> {
  try {
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(5_000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return null;
  }
}

function tail(file: string, lines = 80): string {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n') : '(no output)';
}

async function waitUntilReady(info: StackInfo, exited: () => number | string | null): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const exit = exited();
    if (exit !== null) throw new Error(`scripts/start.ts exited (${exit}) before it was ready`);
    const printedReady = /^Ready\.$/m.test(readFileSync(info.logFile, 'utf8'));
    if (
      printedReady &&
      (await answers(`${info.apiUrl}/healthz`)) === 200 &&
      (await answers(`${info.consoleUrl}/sign-in`)) === 200
    )
      return;
    if (Date.now() > deadline) throw new Error(`the stack was not ready within ${START_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Starts the whole stack the way a user does (`scripts/start.ts`) on free ports with a fresh data directory. */
export default async function globalSetup(config: FullConfig): Promise<void> {
  const tempDir = mkdtempSync(path.join(tmpdir(), 'svc-e2e-'));
  // As root, embedded Postgres runs as its own user, which must reach the data directory inside.
  chmodSync(tempDir, 0o755);
  const [apiPort, consolePort] = await freePorts(2);
  const key = `svc_sk_e2e_${randomBytes(30).toString('base64url')}`;
  const logFile = path.join(tempDir, 'stack.log');
  const log = openSync(logFile, 'a');
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['scripts/start.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', log, log],
    env: {
      ...process.env,
      PORT: String(apiPort),
      CONSOLE_PORT: String(consolePort),
      SVC_DATA_DIR: path.join(tempDir, 'data'),
      SVC_LOCAL_SECRET_KEY: key,
      LOG_LEVEL: 'warn',
    },
  });
  closeSync(log);
  let exit: number | string | null = null;
  child.once('exit', (code, signal) => (exit = code ?? signal ?? 'unknown'));
  if (child.pid === undefined) throw new Error('could not start scripts/start.ts');
  child.unref();

  const info: StackInfo = {
    consoleUrl: `http://127.0.0.1:${consolePort}`,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    key,
    keys: [key],
    teamName: 'local',
    teamNames: ['local'],
    pid: child.pid,
    tempDir,
    logFile,
  };
  const stackFile = path.join(tempDir, 'stack.json');
  writeFileSync(stackFile, JSON.stringify(info, null, 2), { mode: 0o600 });
  process.env[STACK_FILE_ENV] = stackFile;

  const started = Date.now();
  try {
    await waitUntilReady(info, () => exit);
  } catch (error) {
    console.error(`\n--- scripts/start.ts output ---\n${tail(logFile)}\n---`);
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(tempDir, { recursive: true, force: true });
    throw error;
  }
  // Each parallel worker has a team of its own (the first the local team), so lists, settings, usage and limits
  // stay predictable within a worker while the workers run side by side.
  for (let worker = 2; worker <= config.workers; worker += 1) {
    const name = `e2e worker ${worker}`;
    const { team_id: teamId } = (await admin(info, 'team', 'create', '--name', name)) as { team_id: string };
    info.keys.push(((await admin(info, 'key', 'create', '--team', teamId)) as { secret: string }).secret);
    info.teamNames.push(name);
  }
  writeFileSync(stackFile, JSON.stringify(info, null, 2), { mode: 0o600 });
  console.log(
    `Stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s: console ${info.consoleUrl}, API ${info.apiUrl}; ` +
      `${info.keys.length} teams, one per worker`,
  );
}
