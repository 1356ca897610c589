import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { StackInfo } from './stack';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

/**
 * The operator's admin CLI against the test stack's database, as an operator runs it (`npm run admin`: the built
 * CLI through scripts/admin-launcher.js, which builds it once when the sources are newer).
 */
export async function admin(stack: StackInfo, ...args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, ['scripts/admin-launcher.js', ...args], {
    cwd: ROOT,
    env: { ...process.env, SVC_DATA_DIR: path.join(stack.tempDir, 'data'), LOG_LEVEL: 'warn' },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as unknown;
}

/** A team of its own with a secret key, so a test may suspend it without touching the shared local team. */
export async function newTeamWithKey(stack: StackInfo, name: string): Promise<{ teamId: string; key: string }> {
  const { team_id: teamId } = (await admin(stack, 'team', 'create', '--name', name)) as { team_id: string };
  const { secret } = (await admin(stack, 'key', 'create', '--team', teamId)) as { secret: string };
  return { teamId, key: secret };
}
