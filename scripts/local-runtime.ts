import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Services } from '@svc/core';

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

/** How to name a directory to the user: relative to the working directory when inside it (".data"). */
export function displayPath(dir: string): string {
  const relative = path.relative(process.cwd(), dir);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : dir;
}

/** What the admin CLI and `npm start` show of a key: never its secret (only its hash is stored anyway). */
export interface KeyListing {
  key_id: string;
  /** The operator's name for the key; null: none. */
  label: string | null;
  kind: string;
  webhooks_allowed: boolean;
  spending_limit_usd: string | null;
  created_at: string;
  revoked_at: string | null;
  /** The feature-flag environments the key administers; null: every environment of its team. */
  environment_ids: string[] | null;
}

// TeamService has no listing of keys yet; this reads the same entity, oldest first.
export async function listTeamKeys(services: Services, teamId: string): Promise<KeyListing[]> {
  // Loaded here: everything else in this file serves scripts that must start without the domain code.
  const { ApiKeyEntity, formatUsd } = await import('@svc/core');
  await services.teams.getTeam(teamId);
  const keys = await services.db.getRepository(ApiKeyEntity).find({ where: { teamId }, order: { id: 'ASC' } });
  return keys.map((key) => ({
    key_id: key.id,
    label: key.label,
    kind: key.kind,
    webhooks_allowed: key.webhooksAllowed,
    spending_limit_usd: key.spendingLimitMicros === null ? null : formatUsd(BigInt(key.spendingLimitMicros)),
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
    environment_ids: key.environmentIds,
  }));
}
