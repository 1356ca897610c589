/**
 * The start-time benchmark of `npm run bench` (docs/benchmarks.md): `npm start` to `Ready.`, as a person runs it, on
 * free ports with a fresh data directory.
 *
 *   first   a fresh data directory (initdb, migrations, the local team) and a console build (SVC_CONSOLE_REBUILD=1,
 *           as on a fresh clone)  vs  Postgres' own first start (initdb and start of an empty cluster)
 *   later   the same data directory again, the console build reused  vs  Postgres' own start of an existing cluster
 *
 * The targets (issue 18): first start <= 30 s, later <= 10 s on a quiet 2-core machine.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort, startEmbeddedPostgres } from '@svc/db';
import { ROOT } from './local-runtime.js';

export interface StartFigures {
  first_s: number;
  first_ceiling_s: number;
  later_s: number;
  later_ceiling_s: number;
  first_target_s: 30;
  later_target_s: 10;
}

/** Seconds from `npm start` to `Ready.`; then Ctrl-C, waiting until it has stopped. */
async function timeToReady(env: NodeJS.ProcessEnv): Promise<number> {
  const started = process.hrtime.bigint();
  const npm = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  const ready = await new Promise<number>((resolve, reject) => {
    const check = setInterval(() => {
      if (/^Ready\.$/m.test(output)) {
        clearInterval(check);
        resolve(Number(process.hrtime.bigint() - started) / 1e9);
      } else if (npm.exitCode !== null) {
        clearInterval(check);
        reject(new Error(`npm start exited (${npm.exitCode}) before Ready.:\n${output}`));
      }
    }, 20);
  });
  process.kill(-npm.pid!, 'SIGINT');
  await exited;
  return ready;
}

/** Seconds until an embedded Postgres on `dataDir` accepts connections (initdb first when the directory is new). */
async function postgresStart(dataDir: string): Promise<number> {
  const started = process.hrtime.bigint();
  const cluster = await startEmbeddedPostgres({ dataDir, persistent: true });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await cluster.stop();
  return seconds;
}

export async function runStartBench(): Promise<{ start: StartFigures }> {
  const tempDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-start-'));
  // As root, embedded Postgres runs as its own user, which must reach the data directories inside.
  chmodSync(tempDir, 0o755);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(await findFreePort()),
    CONSOLE_PORT: String(await findFreePort()),
    SVC_DATA_DIR: path.join(tempDir, 'data'),
  };
  for (const name of ['LOG_LEVEL', 'DATABASE_URL', 'SVC_LOCAL_SECRET_KEY', 'NODE_ENV', 'SVC_CONSOLE_REBUILD'])
    delete env[name];
  try {
    console.log('start: npm start with a console build and a fresh data directory...');
    const first = await timeToReady({ ...env, SVC_CONSOLE_REBUILD: '1' });
    console.log('start: npm start again...');
    const later = await timeToReady(env);
    const ceilingDir = path.join(tempDir, 'postgres');
    const firstCeiling = await postgresStart(ceilingDir);
    const laterCeiling = await postgresStart(ceilingDir);
    const round = (seconds: number) => Number(seconds.toFixed(2));
    return {
      start: {
        first_s: round(first),
        first_ceiling_s: round(firstCeiling),
        later_s: round(later),
        later_ceiling_s: round(laterCeiling),
        first_target_s: 30,
        later_target_s: 10,
      },
    };
  } finally {
    rmSync(tempDir, { recursive: true, force: true });
  }
}

export function printStart(figures: StartFigures): void {
  const line = (name: string, value: number, ceiling: number, target: number) =>
    console.log(
      `${name.padEnd(44)}${value.toFixed(1).padStart(9)} s    ${ceiling.toFixed(1).padStart(9)} s    ${(ceiling / value).toFixed(3).padStart(7)}   (target <= ${target} s)`,
    );
  console.log('\nstart (npm start to Ready.)                    value      Postgres alone      ratio');
  line('first (console build, new data directory)', figures.first_s, figures.first_ceiling_s, figures.first_target_s);
  line('later (same data directory)', figures.later_s, figures.later_ceiling_s, figures.later_target_s);
}
