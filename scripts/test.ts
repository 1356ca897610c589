/**
 * `npm test`: the type check, the linter, the formatter check, unit and integration tests on real Postgres,
 * the console build and the Playwright e2e tests in Debian's Chromium. Ends with one line `N passed, N failed`
 * counting every test and every check, and exits non-zero on any failure.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { ROOT } from './local-runtime.js';

const CHROMIUM = '/usr/bin/chromium';
const TMP = path.join(ROOT, '.tmp');
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);

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

function runStep(
  name: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; output: string; seconds: number }> {
  console.log(`\n=== ${name}: ${path.basename(command)} ${args.join(' ')}`);
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
      stream.write(chunk);
    };
    child.stdout.on('data', (chunk: Buffer) => collect(chunk, process.stdout));
    child.stderr.on('data', (chunk: Buffer) => collect(chunk, process.stderr));
    child.on('close', (code) => resolve({ code: code ?? 1, output, seconds: (Date.now() - started) / 1000 }));
  });
}

async function check(
  name: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<StepResult> {
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

function ensureChromium(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || spawnSync('which', ['apt-get']).status !== 0) {
    console.error(
      `Chromium is missing at ${CHROMIUM}. Install Debian's package: sudo apt-get update && sudo apt-get install -y chromium`,
    );
    return false;
  }
  console.log('Installing Debian Chromium for the e2e tests (apt-get install chromium)...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const install = spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  return install.status === 0 && existsSync(CHROMIUM);
}

async function vitest(): Promise<StepResult> {
  const report = path.join(TMP, 'vitest.json');
  rmSync(report, { force: true });
  const { code, seconds } = await runStep('unit and integration tests', bin('vitest'), [
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
  ]);
  if (!existsSync(report)) return { name: 'vitest', passed: 0, failed: 1, seconds };
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
  return { name: 'vitest', passed: summary.numPassedTests, failed, seconds, failures };
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
  results.push(
    await check('type check (server, packages, scripts, e2e)', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']),
  );
  results.push(await check('type check (console)', bin('tsc'), ['-p', 'apps/console/tsconfig.json', '--noEmit']));
  results.push(await check('lint', bin('eslint'), ['.', '--max-warnings', '0']));
  results.push(await check('format', bin('prettier'), ['--check', '.', '--log-level', 'warn']));
  results.push(await vitest());
  const build = await check(
    'console build',
    process.execPath,
    [path.join(ROOT, 'node_modules/next/dist/bin/next'), 'build'],
    {
      cwd: path.join(ROOT, 'apps/console'),
      env: { NEXT_TELEMETRY_DISABLED: '1' },
    },
  );
  results.push(build);
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
