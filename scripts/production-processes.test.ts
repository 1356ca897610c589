import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, findFreePort } from '@svc/db';
import { buildProduction } from './build.js';
import { ROOT } from './local-runtime.js';

/**
 * The production build (`npm run build`, what the Dockerfile and docker-compose.yml run with plain `node`) starts,
 * serves and stops on SIGTERM, and refuses to start, in one line, without the settings production needs.
 */
let databaseUrl: string;
let drop: (() => Promise<void>) | undefined;
const children: ChildProcess[] = [];
// Inside node_modules: the bundles resolve their dependencies from the repository's node_modules, and neither
// git, ESLint nor Prettier looks there.
const outdir = path.join(ROOT, 'node_modules/.cache', `svc-build-test-${randomBytes(4).toString('hex')}`);

beforeAll(async () => {
  await buildProduction(outdir);
  const database = await createTestDatabase();
  databaseUrl = database.url;
  drop = database.drop;
}, 60_000);
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await drop?.();
  rmSync(outdir, { recursive: true, force: true });
});

function run(entry: 'server' | 'worker', env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, [path.join(outdir, `${entry}.js`)], {
    // Not the repository: the build must not depend on the working directory.
    cwd: '/',
    env: { PATH: process.env['PATH'] ?? '', NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  children.push(child);
  return { child, output: () => output };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

/** Within 60 s: alone the processes are up in about 2 s, but beside the whole suite a worker once took over 30 s. */
async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const PUBLIC = 'https://webhooks.example.com';

describe('production processes (built JavaScript, plain node)', () => {
  it('refuse to start without SVC_ENCRYPTION_KEY or SVC_PUBLIC_BASE_URL, saying so in one line', async () => {
    const noKey = run('server', { DATABASE_URL: databaseUrl, SVC_PUBLIC_BASE_URL: PUBLIC, PORT: '0' });
    const noUrl = run('worker', { DATABASE_URL: databaseUrl, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    expect({ server: await exited(noKey.child), worker: await exited(noUrl.child) }).toEqual({ server: 1, worker: 1 });
    expect(noKey.output()).toMatch(/^server did not start: SVC_ENCRYPTION_KEY [^\n]*\n$/);
    expect(noUrl.output()).toMatch(/^worker did not start: SVC_PUBLIC_BASE_URL is required in production[^\n]*\n$/);
  }, 40_000);

  it('announce loopback receivers in one WARNING line when SVC_ALLOW_LOOPBACK_RECEIVERS=1', async () => {
    // Without a sealing key they stop right after the announcement: enough to see it.
    const env = { DATABASE_URL: databaseUrl, SVC_PUBLIC_BASE_URL: PUBLIC, SVC_ALLOW_LOOPBACK_RECEIVERS: '1' };
    const server = run('server', env);
    const worker = run('worker', env);
    await Promise.all([exited(server.child), exited(worker.child)]);
    for (const output of [server.output(), worker.output()])
      expect(output.split('\n').filter((line) => line.startsWith('WARNING:'))).toEqual([
        expect.stringMatching(/^WARNING: loopback receivers are allowed \(SVC_ALLOW_LOOPBACK_RECEIVERS=1\)/),
      ]);
  }, 40_000);

  it('serve /healthz, /readyz and the API, run the worker, and stop cleanly on SIGTERM', async () => {
    const port = await findFreePort();
    const env = {
      DATABASE_URL: databaseUrl,
      SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SVC_PUBLIC_BASE_URL: PUBLIC,
      PORT: String(port),
      HOST: '127.0.0.1',
    };
    const server = run('server', env);
    const worker = run('worker', env);
    // A server that exits (a port taken meanwhile by another process, a failed start) is reported at once, with what
    // it printed; so is one still not ready at the deadline.
    await until(async () => {
      if (server.child.exitCode !== null)
        throw new Error(`the server exited with ${server.child.exitCode}: ${server.output()}`);
      return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200;
    }, 'the server').catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\nserver output:\n${server.output()}`);
    });
    await until(() => worker.output().includes('worker started'), 'the worker');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const unauthorized = await fetch(`http://127.0.0.1:${port}/v1/tenants`);
    expect(unauthorized.status).toBe(401);
    expect(server.output() + worker.output()).not.toContain('WARNING');
    const [serverExit, workerExit] = [exited(server.child), exited(worker.child)];
    server.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect({ server: await serverExit, worker: await workerExit }).toEqual({ server: 0, worker: 0 });
  }, 150_000);
});
