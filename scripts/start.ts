/**
 * `npm start`: local mode. Starts (or reuses) Postgres, applies migrations, ensures the local team and key,
 * and runs the server, the worker and the console together.
 */
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
  BUILD_PROGRESS_MS,
  buildConsole,
  consoleBuildIsCurrent,
  CONSOLE_DIR,
  startConsole,
  StartError,
} from './console-process.js';
import { dataDir, displayPath, listTeamKeys, localSealingKey, writeRuntimeInfo } from './local-runtime.js';
import { reclaimDataDir, startGuard, stopOrphanBuild, stopOrphanConsole, watchLaunchers } from './stack-processes.js';

const LOCAL_TEAM = 'local';

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

function portIsFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

async function main(): Promise<void> {
  const env = process.env;
  const config = readServerConfig(env, 'local');
  const consolePort = Number(env['CONSOLE_PORT'] ?? 3000);
  // Local mode keeps the terminal for what a person needs (the URLs and the key): request logs and other
  // routine lines only at warn, unless LOG_LEVEL asks for more.
  const logger = pino({ level: env['LOG_LEVEL'] ?? 'warn', serializers: LOG_SERIALIZERS });
  const dir = dataDir(env);

  // Never touch the data of a running instance; what a start that did not stop cleanly left running is stopped.
  const user = await reclaimDataDir(dir);
  if (user !== null)
    throw new StartError(
      `the data directory ${displayPath(dir)} is in use by process ${user}: stop that one first, or set SVC_DATA_DIR to another directory`,
    );
  if (!(await portIsFree(config.port, config.host)))
    throw new StartError(`port ${config.port} on ${config.host} is in use: stop what is listening there, or set PORT`);
  const withConsole = env['SVC_NO_CONSOLE'] !== '1';
  if (
    withConsole &&
    !(await portIsFree(consolePort, '127.0.0.1')) &&
    !((await stopOrphanConsole(consolePort, CONSOLE_DIR)) && (await portIsFree(consolePort, '127.0.0.1')))
  )
    throw new StartError(
      `port ${consolePort} (the console) is in use: stop what is listening there, or set CONSOLE_PORT`,
    );

  const guard = startGuard(dir);
  // Everything started so far, stopped in reverse on the way out (also when start-up fails half-way); the console
  // first, as it is the API's client.
  const started: Array<() => Promise<unknown>> = [];
  let stopConsole: (() => Promise<void>) | null = null;
  let stopping = false;
  let stopped: Promise<void> | null = null;
  const stopAll = () =>
    (stopped ??= (async () => {
      stopping = true;
      await stopConsole?.().catch(() => undefined);
      for (const step of started.reverse()) await step().catch(() => undefined);
      guard.close();
    })());
  const stop = async (code: number) => {
    if (stopping) return;
    await stopAll();
    process.exit(code);
  };
  // The handlers stay installed while stopping: a second signal (a second Ctrl-C, or Apollo Server re-sending
  // SIGTERM to the process after its own stop) must not kill it before Postgres is down.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void stop(0));
  const stopBecause = (reason: string) => {
    if (stopping) return;
    console.error(`npm start: ${reason}: stopping`);
    void stop(1);
  };
  watchLaunchers((launcher) =>
    stopBecause(`${launcher.command} (process ${launcher.pid}), which started this one, is gone`),
  );

  try {
    // Stopped last: the spans of everything else's stop are exported.
    const tracing = await startConfiguredTracing(config.tracing, 'svc-webhooks');
    if (tracing) started.push(() => tracing.shutdown());
    const apiUrl = `http://localhost:${config.port}`;
    const consoleUrl = `http://localhost:${consolePort}`;
    // The console builds (when its sources changed) and starts while Postgres, the server and the worker start.
    const consoleStarted = withConsole
      ? (async () => {
          if (!consoleBuildIsCurrent(env)) {
            await stopOrphanBuild(CONSOLE_DIR);
            if (stopping) return;
            console.log('Building the console (first start, or its sources changed): a minute or more...');
            const build = buildConsole(
              guard,
              (seconds) => console.log(`Building the console... ${seconds} s`),
              buildProgressMs(env),
            );
            stopConsole = build.stop;
            await build.done;
          }
          if (stopping) return;
          const running = await startConsole(guard, {
            port: consolePort,
            apiUrl: `http://127.0.0.1:${config.port}`,
            env,
          });
          stopConsole = running.stop;
          running.process.once('exit', (code, signal) =>
            stopBecause(`the console exited (${signal ?? `code ${code}`})`),
          );
        })()
      : Promise.resolve();
    // Awaited below; until then a failure must not count as unhandled.
    consoleStarted.catch(() => undefined);

    let cluster: EmbeddedCluster | null = null;
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      cluster = await startEmbeddedPostgres({
        dataDir: path.join(dir, 'pg'),
        persistent: true,
        port: Number(env['SVC_PG_PORT'] ?? 0),
        ownSession: true,
        onSpawn: (postmaster) => guard.track(postmaster, 'Postgres', 'SIGINT'),
      });
      started.push(() => cluster!.stop());
      for (const removed of cluster.abandonedClustersRemoved)
        console.warn(`Removed ${removed}: the Postgres cluster of a checkout that no longer exists`);
      cluster.postmaster.once('exit', (code, signal) =>
        stopBecause(`Postgres stopped unexpectedly (${signal ?? `code ${code}`})`),
      );
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
    // The admin CLI finds the database through this file: written as soon as the database is migrated, before
    // /healthz answers, so a script that waits for /healthz can use the CLI while the console still builds.
    writeRuntimeInfo(dir, { databaseUrl, apiUrl, consoleUrl, pid: process.pid });
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
    await consoleStarted;

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
    // Stopping already (a Ctrl-C during start-up, Postgres gone): the failure is a consequence, not news.
    const consequence = stopping;
    await stopAll();
    if (!consequence) throw error;
  }
}

main().catch((error: unknown) => {
  // One line says what is wrong and what to do; LOG_LEVEL=debug adds the stack.
  const message = error instanceof Error ? error.message || error.name : String(error);
  console.error(`npm start: ${message}`);
  if (error instanceof Error && /^(debug|trace)$/.test(process.env['LOG_LEVEL'] ?? '')) console.error(error.stack);
  process.exit(1);
});

/** SVC_CONSOLE_BUILD_PROGRESS_SECONDS: how often a console build says it is still running (5 s by default). */
function buildProgressMs(env: NodeJS.ProcessEnv): number {
  const seconds = Number(env['SVC_CONSOLE_BUILD_PROGRESS_SECONDS'] ?? BUILD_PROGRESS_MS / 1000);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : BUILD_PROGRESS_MS;
}
