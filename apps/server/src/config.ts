import { DEFAULT_LIMITS, type Limits } from '@svc/core';

/** Configuration is read once at start into this object and passed down; nothing else reads process.env. */
export interface ServerConfig {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** Local development and tests: allow http(s) receivers on loopback addresses. */
  allowLoopbackReceivers: boolean;
  serviceId: string;
  region: string;
  publicBaseUrl: string;
  logLevel: string;
  limits: Limits;
  /** Tests: check every response against its declared schema and fail loudly on a mismatch. */
  validateResponses: boolean;
}

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be an integer`);
  return Number(value);
}

export function readServerConfig(env: NodeJS.ProcessEnv, mode: 'local' | 'production'): ServerConfig {
  const port = integer(env['PORT'], 8080, 'PORT');
  const loopbackSetting = env['SVC_ALLOW_LOOPBACK_RECEIVERS'];
  return {
    port,
    host: env['HOST'] ?? (mode === 'local' ? '127.0.0.1' : '0.0.0.0'),
    databaseUrl: env['DATABASE_URL'] || undefined,
    allowLoopbackReceivers: mode === 'local' ? loopbackSetting !== '0' : loopbackSetting === '1',
    serviceId: env['SVC_SERVICE_ID'] ?? 'svc-webhooks',
    region: env['SVC_REGION'] ?? 'local',
    publicBaseUrl: env['SVC_PUBLIC_BASE_URL'] ?? `http://localhost:${port}`,
    logLevel: env['LOG_LEVEL'] ?? 'info',
    limits: DEFAULT_LIMITS,
    validateResponses: env['SVC_VALIDATE_RESPONSES'] === '1',
  };
}
