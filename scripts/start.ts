/**
 * `npm start`: local mode. Starts (or reuses) Postgres, applies migrations, ensures the local team and key,
 * and runs the server, the worker and the console together.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pino from 'pino';
import {
  ApiKeyEntity,
  hashKey,
  isValidSecretKey,
  LOG_SERIALIZERS,
  openCore,
  startConfiguredTracing,
  systemClock,
  type Services,
} from '@svc/core';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedCluster } from '@svc/db';
import { readServerConfig, startServer, type RunningServer } from '@svc/server';
import { startWorker } from '@svc/worker';
import {
  dataDir,
  dataDirInUse,
  displayPath,
  listTeamKeys,
  localSealingKey,
  ROOT,
  writeRuntimeInfo,
} from './local-runtime.js';

const LOCAL_TEAM = 'local';
const CONSOLE_START_TIMEOUT_MS = 120_000;

/** A reason not to start, explained in one line. */
class StartError extends Error {}

type LocalKey =
  | { source: 'configured'; keyId: string }
  | { source: 'generated'; keyId: string; secret: string }
  | { source: 'earlier'; teamId: string; keyIds: string[] };

/** The local team, and its key: the configured one, a new one on first start (printed once), or the earlier one. */
async function ensureLocalTeam(services: Services, configuredKey: string | undefined): Promise<LocalKey> {
  const existing = await services.teams.findTeamByName(LOCAL_TEAM);
  const team = existing ?? (await services.teams.createTeam(LOCAL_TEAM));
  if (configuredKey !== undefined && !isValidSecretKey(configuredKey))
    console.warn('SVC_LOCAL_SECRET_KEY is not a valid svc_sk_ key; ignoring it');
  else if (configuredKey !== undefined) {
    if (!(await services.teams.hasActiveKey(team.id, configuredKey)))
      return {
        source: 'configured',
        keyId: (await services.teams.createKey(team.id, { secret: configuredKey })).keyId,
      };
    const key = await services.db.getRepository(ApiKeyEntity).findOneByOrFail({ secretSha256: hashKey(configuredKey) });
    return { source: 'configured', keyId: key.id };
  }
  if (existing) {
    const active = (await listTeamKeys(services, team.id)).filter((k) => k.kind === 'secret' && !k.revoked_at);
    return { source: 'earlier', teamId: team.id, keyIds: active.map((k) => k.key_id) };
  }
  const issued = await services.teams.createKey(team.id);
  return { source: 'generated', keyId: issued.keyId, secret: issued.secret };
}

/** The key lines of the summary: printed last, so that they are the lines above `Ready.`. */
function localKeyLines(key: LocalKey): string[] {
  const revoke = (keyId: string) => `revoke it with: npm run --silent admin -- key revoke --key ${keyId}`;
  switch (key.source) {
    case 'generated':
      return [
        `Local team key (shown once, store it): ${key.secret}`,
        `Local team key ID: ${key.keyId} (${revoke(key.keyId)})`,
      ];
    case 'configured':
      return [
        `Local team key: the value of SVC_LOCAL_SECRET_KEY`,
        `Local team key ID: ${key.keyId} (${revoke(key.keyId)})`,
      ];
    case 'earlier': {
      const another = `\`npm run --silent admin -- key create --team ${key.teamId}\` makes another`;
      return key.keyIds.length
        ? [
            `Local team key: printed at first start (or set SVC_LOCAL_SECRET_KEY); ${another}`,
            `Local team key ID: ${key.keyIds.join(', ')}`,
          ]
        : [`Local team key: none is active; ${another}`];
    }
  }
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
  if (result.status !== 0) throw new StartError('the console build failed (see above)');
}

function portIsFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** Resolves once the console answers HTTP; rejects if it exits first or takes too long. */
async function consoleAnswers(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + CONSOLE_START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new StartError('the console did not start (see above)');
    if (
      await fetch(url, { redirect: 'manual' }).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new StartError(`the console did not answer at ${url} within ${CONSOLE_START_TIMEOUT_MS / 1000} s`);
}

async function main(): Promise<void> {
  const env = process.env;
  const config = readServerConfig(env, 'local');
  const consolePort = Number(env['CONSOLE_PORT'] ?? 3000);
  // Local mode keeps the terminal for what a person needs (the URLs and the key): request logs and other
  // routine lines only at warn, unless LOG_LEVEL asks for more.
  const logger = pino({ level: env['LOG_LEVEL'] ?? 'warn', serializers: LOG_SERIALIZERS });
  const dir = dataDir(env);

  // Never touch the data of a running instance: its Postgres would die with it.
  const user = dataDirInUse(dir);
  if (user !== null)
    throw new StartError(
      `the data directory ${displayPath(dir)} is in use by process ${user}: stop that one first, or set SVC_DATA_DIR to another directory`,
    );
  if (!(await portIsFree(config.port, config.host)))
    throw new StartError(`port ${config.port} on ${config.host} is in use: stop what is listening there, or set PORT`);
  const withConsole = env['SVC_NO_CONSOLE'] !== '1';
  if (withConsole && !(await portIsFree(consolePort, '127.0.0.1')))
    throw new StartError(
      `port ${consolePort} (the console) is in use: stop what is listening there, or set CONSOLE_PORT`,
    );

  // Everything started so far, stopped in reverse on the way out (also when start-up fails half-way).
  const started: Array<() => Promise<unknown>> = [];
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const step of started.reverse()) await step().catch(() => undefined);
    process.exit(code);
  };
  // The handlers stay installed while stopping: a second signal (a second Ctrl-C, or Apollo Server re-sending
  // SIGTERM to the process after its own stop) must not kill it before Postgres is down.
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));

  try {
    // Stopped last: the spans of everything else's stop are exported.
    const tracing = await startConfiguredTracing(config.tracing, 'svc-webhooks');
    if (tracing) started.push(() => tracing.shutdown());
    let cluster: EmbeddedCluster | null = null;
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      cluster = await startEmbeddedPostgres({
        dataDir: path.join(dir, 'pg'),
        persistent: true,
        port: Number(env['SVC_PG_PORT'] ?? 0),
      });
      started.push(() => cluster!.stop());
      databaseUrl = cluster.url.replace(/\/postgres$/, '/svc');
      await ensureDatabase(databaseUrl);
    }

    const core = await openCore({
      ...config,
      databaseUrl,
      clock: systemClock,
      sealingKey: config.sealingKey ?? localSealingKey(dir),
    });
    started.push(() => core.close());
    const localKey = await ensureLocalTeam(core.services, env['SVC_LOCAL_SECRET_KEY']);
    const server: RunningServer = await startServer(core.services, config, logger);
    started.push(() => server.close());
    const worker = await startWorker({
      databaseUrl,
      services: core.services,
      logger,
      docsUrl: `${config.publicBaseUrl}/v1`,
    });
    started.push(() => worker.stop());

    const apiUrl = `http://localhost:${config.port}`;
    const consoleUrl = `http://localhost:${consolePort}`;
    if (withConsole) {
      const consoleDir = path.join(ROOT, 'apps/console');
      buildConsoleIfNeeded(consoleDir);
      const { cmd, args } = consoleCommand();
      // Its banner is noise next to ours; its errors go to stderr, which stays visible.
      const consoleProcess = spawn(cmd, [...args, 'start', '-p', String(consolePort), '-H', '127.0.0.1'], {
        cwd: consoleDir,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: {
          ...env,
          SVC_API_URL: `http://127.0.0.1:${config.port}`,
          NEXT_TELEMETRY_DISABLED: '1',
          PORT: String(consolePort),
        },
      });
      started.push(async () => consoleProcess.kill('SIGTERM'));
      consoleProcess.on('exit', (code) => {
        if (stopping) return;
        console.error(`console exited with code ${code}`);
        void stop(1);
      });
      await consoleAnswers(`http://127.0.0.1:${consolePort}/`, consoleProcess);
    }

    writeRuntimeInfo(dir, { databaseUrl, apiUrl, consoleUrl, pid: process.pid });
    console.log('');
    for (const warning of config.warnings) console.warn(warning);
    console.log(`REST API      ${apiUrl}/v1`);
    console.log(`Platform API  ${apiUrl}/v1/platform`);
    console.log(`GraphQL       ${apiUrl}/graphql`);
    if (withConsole) console.log(`Console       ${consoleUrl}`);
    console.log(`Health        ${apiUrl}/healthz`);
    if (config.tracing) console.log(`Tracing       OTLP/HTTP to ${new URL(config.tracing.tracesUrl).origin}`);
    for (const line of localKeyLines(localKey)) console.log(line);
    console.log('Ready.');
  } catch (error) {
    stopping = true;
    for (const step of started.reverse()) await step().catch(() => undefined);
    throw error;
  }
}

main().catch((error: unknown) => {
  // One line says what is wrong and what to do; LOG_LEVEL=debug adds the stack.
  const message = error instanceof Error ? error.message || error.name : String(error);
  console.error(`npm start: ${message}`);
  if (error instanceof Error && /^(debug|trace)$/.test(process.env['LOG_LEVEL'] ?? '')) console.error(error.stack);
  process.exit(1);
});
