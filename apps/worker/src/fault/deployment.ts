import { randomBytes, randomUUID } from 'node:crypto';
import PgBoss from 'pg-boss';
import {
  JOB_SCHEMA,
  openCore,
  replayBatchJob,
  systemClock,
  testCoreOptions,
  type OpenedCore,
  subscriptionDeliveryJob,
} from '@svc/core';
import { findFreePort } from '@svc/db';
import { startServiceProcess, type ServiceProcess } from './processes.js';

export interface ApiAnswer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  text: string;
}

/** The REST API as one team sees it (its own key). */
export interface TeamClient {
  /** One REST call with the team's key and a fresh Idempotency-Key (or the one given). */
  api(
    method: string,
    path: string,
    body?: unknown,
    idempotencyKey?: string,
    headers?: Record<string, string>,
  ): Promise<ApiAnswer>;
  /**
   * Publishes one message (event type order.created), retrying 429s after their Retry-After with the same
   * Idempotency-Key; returns the last answer.
   */
  publish(tenantId: string, payload: unknown, idempotencyKey?: string): Promise<ApiAnswer>;
  /** Creates a tenant and an endpoint on it; returns their IDs and the endpoint's signing secret. */
  endpoint(
    url: string,
    extra?: Record<string, unknown>,
  ): Promise<{ tenantId: string; endpointId: string; secret: string }>;
}

/**
 * A production-shaped deployment for fault tests: the real server process and real worker processes (system
 * clock) over one database, plus an in-test core (same sealing key, system clock) for the team, its key and the
 * database checks.
 */
export interface Deployment extends TeamClient {
  readonly databaseUrl: string;
  readonly core: OpenedCore;
  readonly server: ServiceProcess;
  readonly apiUrl: string;
  /** The team's secret key (for a client of another server on the same database: teamClient). */
  readonly secretKey: string;
  /** The environment the deployment's processes get (the database, the sealing key, the public URL). */
  readonly env: Readonly<Record<string, string>>;
  /** Starts the server process again on the same port (after a kill -9 of it, say). */
  restartServer(): Promise<ServiceProcess>;
  startWorker(name?: string, extraEnv?: Record<string, string>): Promise<ServiceProcess>;
  /** Another team with a key of its own and the event type order.created. */
  addTeam(name: string): Promise<TeamClient>;
  close(): Promise<void>;
}

export interface DeploymentOptions {
  databaseUrl: string;
  /**
   * pg-boss expiry of delivery and replay batch jobs (their contracts say 120 s) and how often expired jobs are looked for (pg-boss
   * maintenance, 120 s by default in every worker). Fault tests shorten both so that a killed worker's job comes
   * back in seconds; the mechanism is the production one.
   */
  jobExpirySeconds?: number;
}

export async function startDeployment(options: DeploymentOptions): Promise<Deployment> {
  const { databaseUrl } = options;
  const sealingKey = randomBytes(32);
  const core = await openCore(testCoreOptions(databaseUrl, systemClock, { sealingKey, migrate: true, poolSize: 4 }));
  let supervisor: PgBoss | null = null;
  const processes: ServiceProcess[] = [];
  try {
    const team = await core.services.teams.createTeam('fault');
    const key = await core.services.teams.createKey(team.id);
    await core.services.teams.setPaymentCard(team.id, true);
    if (options.jobExpirySeconds) {
      for (const queue of [replayBatchJob.queue, subscriptionDeliveryJob.queue])
        await core.jobQueue.boss.updateQueue(queue, { name: queue, expireInSeconds: options.jobExpirySeconds });
      // pg-boss runs its maintenance (which hands expired jobs out again) in whichever process gets there first.
      supervisor = new PgBoss({
        connectionString: databaseUrl,
        max: 2,
        schema: JOB_SCHEMA,
        schedule: false,
        maintenanceIntervalSeconds: 1,
      });
      supervisor.on('error', () => undefined);
      await supervisor.start();
    }
    const env = {
      DATABASE_URL: databaseUrl,
      SVC_ENCRYPTION_KEY: sealingKey.toString('base64'),
      SVC_PUBLIC_BASE_URL: 'http://svc.test',
      SVC_ALLOW_LOOPBACK_RECEIVERS: '1',
    };
    const port = await findFreePort();
    const launchServer = async () => {
      const started = await startServiceProcess('server', { ...env, PORT: String(port), HOST: '127.0.0.1' });
      processes.push(started);
      await started.waitFor('server listening', 45_000);
      return started;
    };
    let server = await launchServer();
    const apiUrl = `http://127.0.0.1:${port}/v1`;

    const fault = teamClient(apiUrl, key.secret);
    const created = await fault.api('POST', '/event_types', { name: 'order.created' });
    if (created.status !== 201) throw new Error(`event type: ${created.status} ${created.text}`);

    return {
      databaseUrl,
      core,
      get server() {
        return server;
      },
      apiUrl,
      secretKey: key.secret,
      env,
      ...fault,
      async restartServer() {
        server = await launchServer();
        return server;
      },
      async startWorker(name = 'worker', extraEnv = {}) {
        const worker = await startServiceProcess('worker', { ...env, ...extraEnv }, name);
        processes.push(worker);
        await worker.waitFor('worker started', 45_000);
        return worker;
      },
      async addTeam(name) {
        const other = await core.services.teams.createTeam(name);
        const otherKey = await core.services.teams.createKey(other.id);
        await core.services.teams.setPaymentCard(other.id, true);
        const client = teamClient(apiUrl, otherKey.secret);
        const eventType = await client.api('POST', '/event_types', { name: 'order.created' });
        if (eventType.status !== 201) throw new Error(`event type: ${eventType.status} ${eventType.text}`);
        return client;
      },
      async close() {
        await Promise.all(processes.map((p) => p.stop(5000)));
        await supervisor?.stop({ graceful: false, wait: true, close: true });
        await core.close();
      },
    };
  } catch (error) {
    await Promise.all(processes.map((p) => p.kill9()));
    await supervisor?.stop({ graceful: false, wait: true, close: true }).catch(() => undefined);
    await core.close();
    throw error;
  }
}

let endpoints = 0;

/** The REST API at apiUrl as the team of the secret key sees it. */
export function teamClient(apiUrl: string, secret: string): TeamClient {
  const api = async (
    method: string,
    path: string,
    body?: unknown,
    idempotencyKey?: string,
    extraHeaders: Record<string, string> = {},
  ): Promise<ApiAnswer> => {
    const headers: Record<string, string> = { ...extraHeaders, authorization: `Bearer ${secret}` };
    if (method === 'POST' || method === 'PUT') headers['idempotency-key'] = idempotencyKey ?? randomUUID();
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, json, text };
  };
  return {
    api,
    async publish(tenantId, payload, idempotencyKey = randomUUID()) {
      for (;;) {
        const body = { tenant_id: tenantId, event_type: 'order.created', payload };
        const answer = await api('POST', '/messages', body, idempotencyKey);
        if (answer.status !== 429) return answer;
        const wait = Math.min(1000, Number(answer.headers.get('retry-after') ?? 0) * 1000);
        await new Promise((resolve) => setTimeout(resolve, wait || 20 + Math.random() * 80));
      }
    },
    async endpoint(url, extra = {}) {
      endpoints += 1;
      // Tests that look for an endpoint in a given partition make many in a burst: a 429 is waited out, as a
      // client would (its Idempotency-Key kept).
      const create = async (path: string, body: unknown) => {
        const idempotencyKey = randomUUID();
        for (;;) {
          const answer = await api('POST', path, body, idempotencyKey);
          if (answer.status !== 429) return answer;
          await new Promise((resolve) =>
            setTimeout(resolve, Math.min(2000, Number(answer.headers.get('retry-after') ?? 1) * 1000)),
          );
        }
      };
      const tenant = await create('/tenants', { external_id: `fault-${endpoints}`, name: `fault ${endpoints}` });
      if (tenant.status !== 201) throw new Error(`tenant: ${tenant.status} ${tenant.text}`);
      const endpoint = await create('/endpoints', { tenant_id: tenant.json.id, url, ...extra });
      if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${endpoint.text}`);
      return {
        tenantId: tenant.json.id as string,
        endpointId: endpoint.json.id as string,
        secret: endpoint.json.signing_secret as string,
      };
    },
  };
}
