/**
 * `npm start`: local mode. Starts (or reuses) Postgres, applies migrations, ensures the local team and key,
 * and runs the server, the worker and the console together.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { openCore, systemClock, isValidSecretKey, type Services } from '@svc/core';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedCluster } from '@svc/db';
import { readServerConfig, startServer } from '@svc/server';
import { startWorker } from '@svc/worker';
import { dataDir, localSealingKey, ROOT, writeRuntimeInfo } from './local-runtime.js';

const LOCAL_TEAM = 'local';

type LocalKey = { source: 'configured' } | { source: 'generated'; secret: string } | { source: 'earlier' };

/** The local team, and its key: the configured one, a new one on first start (printed once), or the earlier one. */
async function ensureLocalTeam(services: Services, configuredKey: string | undefined): Promise<LocalKey> {
  const existing = await services.teams.findTeamByName(LOCAL_TEAM);
  const team = existing ?? (await services.teams.createTeam(LOCAL_TEAM));
  if (configuredKey !== undefined && !isValidSecretKey(configuredKey))
    console.warn('SVC_LOCAL_SECRET_KEY is not a valid svc_sk_ key; ignoring it');
  else if (configuredKey !== undefined) {
    if (!(await services.teams.hasActiveKey(team.id, configuredKey)))
      await services.teams.createKey(team.id, { secret: configuredKey });
    return { source: 'configured' };
  }
  if (existing) return { source: 'earlier' };
  return { source: 'generated', secret: (await services.teams.createKey(team.id)).secret };
}

function consoleCommand(): { cmd: string; args: string[] } {
  return { cmd: process.execPath, args: [path.join(ROOT, 'node_modules/next/dist/bin/next')] };
}

function buildConsoleIfNeeded(consoleDir: string): void {
  if (existsSync(path.join(consoleDir, '.next/BUILD_ID')) && process.env['SVC_CONSOLE_REBUILD'] !== '1') return;
  console.log('Building the console (first start only)...');
  const { cmd, args } = consoleCommand();
  const result = spawnSync(cmd, [...args, 'build'], {
    cwd: consoleDir,
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  if (result.status !== 0) throw new Error('console build failed');
}

async function main(): Promise<void> {
  const env = process.env;
  const config = readServerConfig(env, 'local');
  const consolePort = Number(env['CONSOLE_PORT'] ?? 3000);
  const logger = pino({ level: config.logLevel });
  const dir = dataDir(env);

  let cluster: EmbeddedCluster | null = null;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const pgDir = path.join(dir, 'pg');
    // A cluster left locked by a killed run would refuse to start; the pid file belongs to our own data dir.
    if (existsSync(path.join(pgDir, 'postmaster.pid'))) rmSync(path.join(pgDir, 'postmaster.pid'));
    cluster = await startEmbeddedPostgres({ dataDir: pgDir, persistent: true, port: Number(env['SVC_PG_PORT'] ?? 0) });
    databaseUrl = cluster.url.replace(/\/postgres$/, '/svc');
    await ensureDatabase(databaseUrl);
  }

  const core = await openCore({
    ...config,
    databaseUrl,
    clock: systemClock,
    sealingKey: config.sealingKey ?? localSealingKey(dir),
  });
  const localKey = await ensureLocalTeam(core.services, env['SVC_LOCAL_SECRET_KEY']);
  const server = await startServer(core.services, config, logger);
  const worker = await startWorker({ databaseUrl, services: core.services, logger });

  let consoleProcess: ChildProcess | null = null;
  if (env['SVC_NO_CONSOLE'] !== '1') {
    const consoleDir = path.join(ROOT, 'apps/console');
    buildConsoleIfNeeded(consoleDir);
    const { cmd, args } = consoleCommand();
    consoleProcess = spawn(cmd, [...args, 'start', '-p', String(consolePort), '-H', '127.0.0.1'], {
      cwd: consoleDir,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        ...env,
        SVC_API_URL: `http://127.0.0.1:${config.port}`,
        NEXT_TELEMETRY_DISABLED: '1',
        PORT: String(consolePort),
      },
    });
  }

  const apiUrl = `http://localhost:${config.port}`;
  const consoleUrl = `http://localhost:${consolePort}`;
  writeRuntimeInfo(dir, { databaseUrl, apiUrl, consoleUrl, pid: process.pid });
  console.log('');
  console.log(`REST API      ${apiUrl}/v1`);
  console.log(`Platform API  ${apiUrl}/v1/platform`);
  console.log(`GraphQL       ${apiUrl}/graphql`);
  console.log(`Console       ${consoleUrl}`);
  console.log(`Health        ${apiUrl}/healthz`);
  if (localKey.source === 'generated') console.log(`Local team key (shown once, store it): ${localKey.secret}`);
  else if (localKey.source === 'configured') console.log('Local team key: the value of SVC_LOCAL_SECRET_KEY');
  else
    console.log(
      'Local team key: printed at first start (or set SVC_LOCAL_SECRET_KEY); `npm run --silent admin -- key create --team <id>` makes another.',
    );
  if (config.urlPolicy.allowLoopback)
    console.warn(
      'WARNING: local mode accepts loopback receivers (http or https, any port). Set SVC_ALLOW_LOOPBACK_RECEIVERS=0 to apply the production URL rules.',
    );
  console.log('Ready.');

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    consoleProcess?.kill('SIGTERM');
    await worker.stop().catch(() => undefined);
    await server.close().catch(() => undefined);
    await core.close().catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    process.exit(code);
  };
  consoleProcess?.on('exit', (code) => {
    if (!stopping) {
      console.error(`console exited with code ${code}`);
      void stop(1);
    }
  });
  process.once('SIGTERM', () => void stop(0));
  process.once('SIGINT', () => void stop(0));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
