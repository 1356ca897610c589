import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readStackInfo } from './support/stack';

const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops the stack's process group (SIGTERM, SIGKILL after 10 s), keeps its log, removes the temp dir. */
export default async function globalTeardown(): Promise<void> {
  const info = readStackInfo();
  if (groupAlive(info.pid)) {
    process.kill(-info.pid, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (groupAlive(info.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    if (groupAlive(info.pid)) {
      console.warn('the stack did not stop within 10 s of SIGTERM; sending SIGKILL');
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
