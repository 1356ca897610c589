import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readStackInfo, STACK_FILE_ENV } from './support/stack';

const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops the stack (SIGTERM, then SIGKILL to its process group after 10 s), keeps its log, removes the temp dir. */
export default async function globalTeardown(): Promise<void> {
  // A global setup that failed has already cleaned up after itself.
  const stackFile = process.env[STACK_FILE_ENV];
  if (!stackFile || !existsSync(stackFile)) return;
  const info = readStackInfo();
  if (groupAlive(info.pid)) {
    // The start script stops console, worker, server and Postgres in order on SIGTERM (tsx relays it).
    // Signalling the whole group at once would stop Postgres under the worker's feet.
    try {
      process.kill(info.pid, 'SIGTERM');
    } catch {
      process.kill(-info.pid, 'SIGTERM');
    }
    const deadline = Date.now() + 10_000;
    while (groupAlive(info.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    if (groupAlive(info.pid)) {
      console.warn('the stack did not stop within 10 s of SIGTERM; sending SIGKILL to its process group');
      process.kill(-info.pid, 'SIGKILL');
    }
  }
  if (existsSync(info.logFile)) {
    const results = path.join(E2E_DIR, 'test-results');
    mkdirSync(results, { recursive: true });
    copyFileSync(info.logFile, path.join(results, 'stack.log'));
  }
  rmSync(info.tempDir, { recursive: true, force: true });
}
