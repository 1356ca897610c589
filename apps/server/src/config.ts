import { readCoreConfig, type CoreConfig, type RunMode } from '@svc/core';

/** Configuration is read once at start into this object and passed down; nothing else reads process.env. */
export interface ServerConfig extends CoreConfig {
  port: number;
  host: string;
  /** Tests: check every response against its declared schema and fail loudly on a mismatch. */
  validateResponses: boolean;
}

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be an integer`);
  return Number(value);
}

export function readServerConfig(env: NodeJS.ProcessEnv, mode: RunMode): ServerConfig {
  return {
    ...readCoreConfig(env, mode),
    port: integer(env['PORT'], 8080, 'PORT'),
    host: env['HOST'] ?? (mode === 'local' ? '127.0.0.1' : '0.0.0.0'),
    validateResponses: env['SVC_VALIDATE_RESPONSES'] === '1',
  };
}
