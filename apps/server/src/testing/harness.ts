import pino from 'pino';
import { createTestDatabase } from '@svc/db';
import {
  ManualClock,
  limitsWith,
  openCore,
  testCoreOptions,
  type Actor,
  type AdmissionQueueBounds,
  type LimitName,
  type Services,
} from '@svc/core';
import { buildApp, type BuiltApp } from '../app.js';
import { readServerConfig } from '../config.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface RequestOptions {
  key?: string | null;
  headers?: Record<string, string>;
  /** A JS value (sent as JSON) or a string/Buffer sent as is. */
  body?: unknown;
  raw?: boolean;
  idempotencyKey?: string;
  ifMatch?: string;
}

export interface TestTeam extends Actor {
  key: string;
}

export interface Harness {
  services: Services;
  /** The test database (a worker started by the test connects to it too). */
  databaseUrl: string;
  clock: ManualClock;
  baseUrl: string;
  /** The server root (GraphQL, health). */
  rootUrl: string;
  built: BuiltApp;
  team: TestTeam;
  /** Server log lines, when captured. */
  logs: string[];
  newTeam(name?: string): Promise<TestTeam>;
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

let idempotencyCounter = 0;
/**
 * Statements any request may add on the real clock apart from its own work: the key's lookup once its one-second
 * cache entry has expired (a slow, loaded run) and a chunk of rate tokens. For `countRoundTrips({ ignoring })` where
 * a test compares what two requests' own work costs.
 */
export const PER_REQUEST_STATEMENTS = /FROM api_keys k JOIN teams t|rate_limit_buckets/;

export function uniqueKey(): string {
  idempotencyCounter += 1;
  return `test-${process.pid}-${Date.now()}-${idempotencyCounter}`;
}

/**
 * A real server on a loopback port over a fresh database of the test run's Postgres, with a manual clock
 * (so rate limits and retention are deterministic; `realClock` for the machine's) and every response checked
 * against its declared schema.
 */
export interface HarnessOptions {
  limits?: Partial<Record<LimitName, number>>;
  /** SVC_PUBLIC_BASE_URL, as behind a proxy (default: the local address). */
  publicBaseUrl?: string;
  /** Apply the production URL rules (no loopback receivers). */
  strictUrls?: boolean;
  serviceHosts?: string[];
  /** Keep every log line the server writes (at info level) in `logs`. */
  captureLogs?: boolean;
  /** Run on the machine's clock instead of the manual one (for what depends on time passing between requests). */
  realClock?: boolean;
  /** SVC_CONSOLE_URL, for the links some events carry (default: none). */
  consoleUrl?: string;
  /** SVC_TRUSTED_PROXIES (default: none). */
  trustedProxies?: string;
  /** How many admissions the server process holds at once (default: ADMISSION_QUEUE_BOUNDS). */
  admissionQueue?: AdmissionQueueBounds;
  /** More of the server's environment (SVC_STREAM_* settings, ...). */
  serverEnv?: Record<string, string>;
}

/** The machine's clock behind the harness's clock type; moving it by hand is a mistake in the test. */
class WallClock extends ManualClock {
  override now(): Date {
    return new Date();
  }

  override advance(): void {
    throw new Error('this harness runs on the real clock');
  }

  override set(): void {
    throw new Error('this harness runs on the real clock');
  }
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = await createTestDatabase();
  const clock = options.realClock ? new WallClock() : new ManualClock('2026-11-02T10:00:00.000Z');
  const config = {
    ...readServerConfig(
      {
        PORT: '0',
        SVC_VALIDATE_RESPONSES: '1',
        LOG_LEVEL: 'silent',
        ...(options.publicBaseUrl ? { SVC_PUBLIC_BASE_URL: options.publicBaseUrl } : {}),
        ...(options.trustedProxies ? { SVC_TRUSTED_PROXIES: options.trustedProxies } : {}),
        ...options.serverEnv,
      },
      'local',
    ),
    limits: limitsWith(options.limits),
  };
  const core = await openCore(
    testCoreOptions(database.url, clock, {
      limits: config.limits,
      poolSize: 8,
      ...(options.consoleUrl ? { consoleUrl: options.consoleUrl } : {}),
      ...(options.admissionQueue ? { admissionQueue: options.admissionQueue } : {}),
      urlPolicy: {
        allowLoopback: !options.strictUrls,
        serviceHosts: options.serviceHosts ?? ['svc.test', 'hooks.svc.test'],
      },
    }),
  );
  const logs: string[] = [];
  const logger = options.captureLogs
    ? pino({ level: 'info' }, { write: (line: string) => void logs.push(line) })
    : pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  const built = await buildApp(core.services, config, logger);
  const address = await built.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `${address}/v1`;

  const newTeam = async (name = 'team'): Promise<TestTeam> => {
    const team = await core.services.teams.createTeam(name);
    const key = await core.services.teams.createKey(team.id);
    return { teamId: team.id, keyId: key.keyId, key: key.secret };
  };
  const team = await newTeam('main');

  const request = async (method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const key = opts.key === undefined ? team.key : opts.key;
    if (key !== null) headers['authorization'] ??= `Bearer ${key}`;
    if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
    if (opts.ifMatch) headers['if-match'] = opts.ifMatch;
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (opts.body !== undefined) {
      const raw = opts.raw ? (opts.body as string | Uint8Array) : JSON.stringify(opts.body);
      body = typeof raw === 'string' ? raw : new Uint8Array(raw);
      headers['content-type'] ??= 'application/json';
    }
    const url = path.startsWith('http') ? path : `${baseUrl}${path}`;
    const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(15_000) });
    const text = await response.text();
    let json: unknown = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };

  return {
    services: core.services,
    databaseUrl: database.url,
    clock,
    baseUrl,
    rootUrl: address,
    built,
    logs,
    team,
    newTeam,
    request,
    async close() {
      await built.app.close();
      await core.close();
      await database.drop();
    },
  };
}

/** POST with a fresh Idempotency-Key (most tests are not about idempotency). */
export function post(h: Harness, path: string, body: unknown, options: RequestOptions = {}): Promise<ApiResponse> {
  return h.request('POST', path, { idempotencyKey: uniqueKey(), ...options, body });
}
