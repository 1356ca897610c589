import { randomBytes } from 'node:crypto';
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

/** Local mode's key for sealing secrets at rest, made on first start and kept beside the data (mode 0600). */
export function localSealingKey(dir: string): Buffer {
  const file = path.join(dir, 'sealing.key');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key`);
  return key;
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
