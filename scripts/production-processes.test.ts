import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, findFreePort } from '@svc/db';
import { ROOT } from './local-runtime.js';

/** The production entry points (as docker-compose.yml runs them) start, serve and stop on SIGTERM. */
let databaseUrl: string;
let drop: () => Promise<void>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  const database = await createTestDatabase();
  databaseUrl = database.url;
  drop = database.drop;
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await drop();
});

function run(entry: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  children.push(child);
  return { child, output: () => output };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('production processes', () => {
  it('refuse to start without SVC_ENCRYPTION_KEY', async () => {
    const server = run('apps/server/src/main.ts', { DATABASE_URL: databaseUrl, SVC_ENCRYPTION_KEY: '', PORT: '0' });
    expect(await exited(server.child)).toBe(1);
    expect(server.output()).toContain('SVC_ENCRYPTION_KEY');
  }, 40_000);

  it('serve /readyz and the API, run the worker, and stop cleanly on SIGTERM', async () => {
    const port = await findFreePort();
    const env = {
      DATABASE_URL: databaseUrl,
      SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PORT: String(port),
      HOST: '127.0.0.1',
    };
    const server = run('apps/server/src/main.ts', env);
    const worker = run('apps/worker/src/main.ts', env);
    await until(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200,
      'the server',
    );
    await until(() => worker.output().includes('worker started'), 'the worker');
    const unauthorized = await fetch(`http://127.0.0.1:${port}/v1/tenants`);
    expect(unauthorized.status).toBe(401);
    const [serverExit, workerExit] = [exited(server.child), exited(worker.child)];
    server.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect({ server: await serverExit, worker: await workerExit, output: '' }).toEqual({
      server: 0,
      worker: 0,
      output: '',
    });
  }, 60_000);
});
