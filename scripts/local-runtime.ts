import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What a running `npm start` writes so the admin CLI (and people) can find its database. */
export interface RuntimeInfo {
  databaseUrl: string;
  apiUrl: string;
  consoleUrl: string;
  pid: number;
}

export function dataDir(env: NodeJS.ProcessEnv): string {
  return path.resolve(ROOT, env['SVC_DATA_DIR'] ?? '.data');
}

export function writeRuntimeInfo(dir: string, info: RuntimeInfo): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'runtime.json'), JSON.stringify(info, null, 2), { mode: 0o600 });
}

export function readRuntimeInfo(dir: string): RuntimeInfo | null {
  const file = path.join(dir, 'runtime.json');
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, 'utf8')) as RuntimeInfo;
}
