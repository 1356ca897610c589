import type { UrlPolicy } from '@svc/egress';
import { limitsWith, type LimitName, type Limits } from './catalog/limits.js';

export type RunMode = 'local' | 'production';

/** What every process (server, worker, admin) needs; read once at start from the environment given. */
export interface CoreConfig {
  mode: RunMode;
  databaseUrl: string | undefined;
  serviceId: string;
  region: string;
  logLevel: string;
  limits: Limits;
  /**
   * Connections of the process's main database pool (SVC_DB_POOL_SIZE, default 10): TypeORM's, for the API, the
   * settlements with events and the housekeeping. The hot statements' pool (4), pg-boss's and the listener come on
   * top (docs/scaling.md, "Database connections").
   */
  poolSize: number;
  /** 32-byte key that seals secrets at rest (SVC_ENCRYPTION_KEY, base64); local mode keeps one in its data dir. */
  sealingKey: Buffer | null;
  urlPolicy: UrlPolicy;
  /** The service's own public URL, without a trailing slash; its host is never accepted as a receiver. */
  publicBaseUrl: string;
  /** The web console's address, for links in chat summaries of platform events (SVC_CONSOLE_URL); null: no links. */
  consoleUrl: string | null;
  /** Where spans are exported over OTLP/HTTP; null: tracing is off (no SDK is loaded or registered). */
  tracing: TracingConfig | null;
  /** Lines the process prints at start, loudly (for example: loopback receivers are allowed). */
  warnings: string[];
}

export interface TracingConfig {
  /** The OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string;
  /** OTEL_SERVICE_NAME; null: the process's own name (svc-webhooks-server, -worker, or svc-webhooks locally). */
  serviceName: string | null;
}

/** A setting that prevents the process from starting; its message is the one line to show. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** SVC_ENCRYPTION_KEY: standard or URL-safe base64 of exactly 32 bytes. */
export function parseSealingKey(value: string | undefined): Buffer | null {
  if (!value) return null;
  const key = Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error('SVC_ENCRYPTION_KEY must be the base64 of 32 random bytes');
  return key;
}

/**
 * SVC_PUBLIC_BASE_URL: where receivers and integrators reach this service. Required outside local mode, where
 * `localhost` would be wrong in every link we print and would leave the service's real host name free to be
 * registered as a receiver of its own deliveries.
 */
function readPublicBaseUrl(env: NodeJS.ProcessEnv, mode: RunMode): string {
  const value = env['SVC_PUBLIC_BASE_URL'];
  if (!value) {
    if (mode === 'local') return `http://localhost:${env['PORT'] || 8080}`;
    throw new ConfigError(
      'SVC_PUBLIC_BASE_URL is required in production: the URL where this service is reached, e.g. https://webhooks.example.com',
    );
  }
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username)
    throw new ConfigError(
      `SVC_PUBLIC_BASE_URL must be an http(s) URL like https://webhooks.example.com, not "${value}"`,
    );
  return url.toString().replace(/\/+$/, '');
}

/** SVC_CONSOLE_URL: where people open the console; local mode's default is the console `npm start` runs. */
function readConsoleUrl(env: NodeJS.ProcessEnv, mode: RunMode): string | null {
  const value = env['SVC_CONSOLE_URL'];
  if (!value) return mode === 'local' ? `http://localhost:${env['CONSOLE_PORT'] || 3000}` : null;
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username)
    throw new ConfigError(`SVC_CONSOLE_URL must be an http(s) URL like https://console.example.com, not "${value}"`);
  return url.toString().replace(/\/+$/, '');
}

function readLoopbackSetting(env: NodeJS.ProcessEnv, mode: RunMode): boolean {
  const value = env['SVC_ALLOW_LOOPBACK_RECEIVERS'];
  if (value === undefined || value === '') return mode === 'local';
  if (value !== '0' && value !== '1') throw new ConfigError('SVC_ALLOW_LOOPBACK_RECEIVERS must be 0 or 1');
  return value === '1';
}

/**
 * Deployment-wide limits an operator may raise or lower with `SVC_LIMIT_<NAME>` (for example
 * SVC_LIMIT_SERVICE_CONCURRENCY=200): they size the whole installation, not what one team may do, so per-team
 * quotas are not among them. docs/benchmarks.md shows them in use.
 */
export const DEPLOYMENT_LIMITS = ['service_concurrency', 'dispatch_rate'] as const satisfies readonly LimitName[];

function readLimits(env: NodeJS.ProcessEnv): Limits {
  const overrides: Partial<Record<LimitName, number>> = {};
  for (const name of DEPLOYMENT_LIMITS) {
    const variable = `SVC_LIMIT_${name.toUpperCase()}`;
    const value = env[variable];
    if (value === undefined || value === '') continue;
    if (!/^[1-9]\d{0,8}$/.test(value)) throw new ConfigError(`${variable} must be a positive integer, not "${value}"`);
    overrides[name] = Number(value);
  }
  return limitsWith(overrides);
}

/** The main pool's connections a process keeps open at most; production processes open them all at start. */
export const DEFAULT_POOL_SIZE = 10;
const POOL_SIZE_RANGE = { min: 2, max: 500 } as const;

/** SVC_DB_POOL_SIZE: 2 to 500 (two, so that a transaction beside one other query never waits on itself). */
function readPoolSize(env: NodeJS.ProcessEnv): number {
  const value = env['SVC_DB_POOL_SIZE'];
  if (value === undefined || value === '') return DEFAULT_POOL_SIZE;
  const size = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(size >= POOL_SIZE_RANGE.min && size <= POOL_SIZE_RANGE.max))
    throw new ConfigError(
      `SVC_DB_POOL_SIZE must be an integer from ${POOL_SIZE_RANGE.min} to ${POOL_SIZE_RANGE.max}, not "${value}"`,
    );
  return size;
}

/**
 * The standard OpenTelemetry variables that switch tracing on: an OTLP endpoint, unless OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none. The exporter reads its other standard variables itself (OTEL_EXPORTER_OTLP_HEADERS,
 * _TIMEOUT, _COMPRESSION and their _TRACES_ forms). A bad URL is named without its value: it may hold credentials.
 */
function readTracing(env: NodeJS.ProcessEnv): TracingConfig | null {
  if (env['OTEL_SDK_DISABLED'] === 'true' || env['OTEL_TRACES_EXPORTER'] === 'none') return null;
  const tracesEndpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  const endpoint = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  const tracesUrl = tracesEndpoint || (endpoint ? `${endpoint.replace(/\/+$/, '')}/v1/traces` : null);
  if (!tracesUrl) return null;
  const url = URL.canParse(tracesUrl) ? new URL(tracesUrl) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new ConfigError(
      `${tracesEndpoint ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'} must be an http(s) URL like http://collector:4318`,
    );
  return { tracesUrl, serviceName: env['OTEL_SERVICE_NAME'] || null };
}

export function readCoreConfig(env: NodeJS.ProcessEnv, mode: RunMode): CoreConfig {
  const publicBaseUrl = readPublicBaseUrl(env, mode);
  const allowLoopback = readLoopbackSetting(env, mode);
  return {
    mode,
    databaseUrl: env['DATABASE_URL'] || undefined,
    serviceId: env['SVC_SERVICE_ID'] ?? 'svc-webhooks',
    region: env['SVC_REGION'] ?? 'local',
    logLevel: env['LOG_LEVEL'] ?? 'info',
    limits: readLimits(env),
    poolSize: readPoolSize(env),
    sealingKey: parseSealingKey(env['SVC_ENCRYPTION_KEY']),
    urlPolicy: {
      allowLoopback,
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
    consoleUrl: readConsoleUrl(env, mode),
    tracing: readTracing(env),
    warnings: allowLoopback
      ? [
          mode === 'local'
            ? 'WARNING: loopback receivers are allowed (local mode): endpoints may point at 127.0.0.1 and localhost, http or https, any port. SVC_ALLOW_LOOPBACK_RECEIVERS=0 applies the production URL rules.'
            : 'WARNING: loopback receivers are allowed (SVC_ALLOW_LOOPBACK_RECEIVERS=1): endpoints may point at 127.0.0.1 and localhost, so deliveries can reach services on this host. Never use this in production.',
        ]
      : [],
  };
}
