import type { UrlPolicy } from '@svc/egress';
import { DEFAULT_LIMITS, type Limits } from './catalog/limits.js';

export type RunMode = 'local' | 'production';

/** What every process (server, worker, admin) needs; read once at start from the environment given. */
export interface CoreConfig {
  mode: RunMode;
  databaseUrl: string | undefined;
  serviceId: string;
  region: string;
  logLevel: string;
  limits: Limits;
  /** 32-byte key that seals secrets at rest (SVC_ENCRYPTION_KEY, base64); local mode keeps one in its data dir. */
  sealingKey: Buffer | null;
  urlPolicy: UrlPolicy;
  publicBaseUrl: string;
}

/** SVC_ENCRYPTION_KEY: standard or URL-safe base64 of exactly 32 bytes. */
export function parseSealingKey(value: string | undefined): Buffer | null {
  if (!value) return null;
  const key = Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error('SVC_ENCRYPTION_KEY must be the base64 of 32 random bytes');
  return key;
}

export function readCoreConfig(env: NodeJS.ProcessEnv, mode: RunMode): CoreConfig {
  const loopbackSetting = env['SVC_ALLOW_LOOPBACK_RECEIVERS'];
  const publicBaseUrl = env['SVC_PUBLIC_BASE_URL'] ?? `http://localhost:${env['PORT'] || 8080}`;
  return {
    mode,
    databaseUrl: env['DATABASE_URL'] || undefined,
    serviceId: env['SVC_SERVICE_ID'] ?? 'svc-webhooks',
    region: env['SVC_REGION'] ?? 'local',
    logLevel: env['LOG_LEVEL'] ?? 'info',
    limits: DEFAULT_LIMITS,
    sealingKey: parseSealingKey(env['SVC_ENCRYPTION_KEY']),
    urlPolicy: {
      allowLoopback: mode === 'local' ? loopbackSetting !== '0' : loopbackSetting === '1',
      // The service's own host names are never receivers.
      serviceHosts: [
        new URL(publicBaseUrl).hostname,
        ...(env['SVC_SERVICE_HOSTS'] ?? '')
          .split(',')
          .map((host) => host.trim())
          .filter(Boolean),
      ],
    },
    publicBaseUrl,
  };
}
