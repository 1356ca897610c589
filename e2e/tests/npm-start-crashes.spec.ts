import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';

/**
 * `npm start` after kill -9 of each of its processes in turn: nothing it started outlives the killed process (checked
 * by the PIDs recorded before the kill, not by name), and the next `npm start` on the same data directory and ports
 * starts without help. Here, not in the vitest suite, because it runs the console: the e2e run has built it already
 * (a vitest run would build it a second time in `npm test`).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const READY_TIMEOUT_MS = 120_000;
const GONE_TIMEOUT_MS = 30_000;

interface ProcessInfo {
  pid: number;
  ppid: number;
  startTime: string;
  command: string;
}

function readProcess(pid: number): ProcessInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie has exited; only its parent's wait is missing (and an orphan's new parent may never wait).
    if (fields[0] === 'Z' || fields[0] === 'X') return null;
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { pid, ppid: Number(fields[1]), startTime: fields[19]!, command };
  } catch {
    return null;
  }
}

/** The process and all its descendants, whatever session or process group they moved to. */
function processTree(root: number): ProcessInfo[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProcess(Number(name)))
    .filter((info): info is ProcessInfo => info !== null);
  const tree = all.filter((info) => info.pid === root);
  for (let i = 0; i < tree.length; i += 1) tree.push(...all.filter((info) => info.ppid === tree[i]!.pid));
  return tree;
}

const running = (info: ProcessInfo) => readProcess(info.pid)?.startTime === info.startTime;

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => {
      const server = createServer();
      return new Promise<typeof server>((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
    }),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

test.describe('npm start after a crash', () => {
  test.setTimeout(12 * 60_000);
  let tempDir: string;
  let dataDir: string;
  const stacks: ChildProcess[] = [];

  // Made here, not when the file loads: Playwright loads it in its main process too, where no afterAll runs.
  test.beforeAll(() => {
    tempDir = mkdtempSync(path.join(tmpdir(), 'svc-crash-'));
    // As root, embedded Postgres runs as its own user, which must reach the data directory inside.
    chmodSync(tempDir, 0o755);
    dataDir = path.join(tempDir, 'data');
  });

  test.afterAll(() => {
    for (const stack of stacks)
      try {
        process.kill(-stack.pid!, 'SIGKILL');
      } catch {
        // stopped, as it should have
      }
    const cluster = path.join(dataDir, 'pg');
    if (lstatSync(cluster, { throwIfNoEntry: false })?.isSymbolicLink())
      rmSync(realpathSync(cluster), { recursive: true, force: true });
    rmSync(tempDir, { recursive: true, force: true });
  });

  async function startStack(ports: number[]): Promise<{ npm: ChildProcess; output: () => string }> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(ports[0]),
      CONSOLE_PORT: String(ports[1]),
      SVC_DATA_DIR: dataDir,
    };
    for (const name of ['LOG_LEVEL', 'DATABASE_URL', 'SVC_LOCAL_SECRET_KEY', 'NODE_ENV']) delete env[name];
    // In a process group of its own, as a shell runs a command.
    const npm = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    stacks.push(npm);
    let output = '';
    npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!/^Ready\.$/m.test(output)) {
      if (npm.exitCode !== null) throw new Error(`npm start exited (${npm.exitCode}) before Ready.:\n${output}`);
      if (Date.now() > deadline) throw new Error(`npm start was not ready within ${READY_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return { npm, output: () => output };
  }

  async function allGone(processes: ProcessInfo[]): Promise<ProcessInfo[]> {
    const deadline = Date.now() + GONE_TIMEOUT_MS;
    while (processes.some(running) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    return processes.filter(running);
  }

  const TARGETS: Array<{ name: string; is: (info: ProcessInfo, npmPid: number) => boolean }> = [
    { name: 'npm', is: (info, npmPid) => info.pid === npmPid },
    // `npm start` runs `node --import tsx scripts/start.ts`: one process, no tsx launcher in between.
    { name: 'the server and worker', is: (info) => /--import tsx scripts\/start\.ts$/.test(info.command) },
    { name: 'Postgres', is: (info) => /\/bin\/postgres -D /.test(info.command) },
    { name: 'the console (Next.js)', is: (info) => info.command.startsWith('next-server') },
  ];
  const targetNamed = (name: string) => TARGETS.find((target) => target.name === name)!;
  const SERVER = targetNamed('the server and worker');
  const POSTGRES = targetNamed('Postgres');
  const CONSOLE = targetNamed('the console (Next.js)');

  test('kill -9 of any of its processes leaves none behind, and the next start recovers', async () => {
    const ports = await freePorts(2);
    for (const target of TARGETS) {
      const { npm, output } = await startStack(ports);
      const tree = processTree(npm.pid!);
      const victim = tree.find((info) => target.is(info, npm.pid!));
      expect(victim, `${target.name} among ${JSON.stringify(tree.map((info) => info.command))}`).toBeDefined();
      process.kill(victim!.pid, 'SIGKILL');
      expect(await allGone(tree), `left running after kill -9 of ${target.name}:\n${output()}`).toEqual([]);
    }

    // The guard that stops the children when the start process dies is replaced when it is killed itself.
    const { npm, output } = await startStack(ports);
    const tree = processTree(npm.pid!);
    const guard = tree.find((info) => info.command.endsWith('scripts/stack-guard.js'));
    const starter = tree.find((info) => SERVER.is(info, npm.pid!));
    expect(guard && starter).toBeTruthy();
    process.kill(guard!.pid, 'SIGKILL');
    let replacement: ProcessInfo | undefined;
    await expect
      .poll(() => (replacement = processTree(starter!.pid).find((info) => info.command.endsWith('stack-guard.js'))))
      .toBeTruthy();
    process.kill(starter!.pid, 'SIGKILL');
    expect(
      await allGone([...tree, replacement!]),
      `left running after kill -9 of the guard, then of the server:\n${output()}`,
    ).toEqual([]);

    // Killed together, the server and its guard leave Postgres and the console running, as any kill -9 did before
    // the guard; without the record of them either (as then), the next start still finds and stops them.
    const orphaning = await startStack(ports);
    const orphanTree = processTree(orphaning.npm.pid!);
    for (const info of orphanTree.filter((p) => p.command.endsWith('stack-guard.js') || SERVER.is(p, 0)))
      process.kill(info.pid, 'SIGKILL');
    const orphans = orphanTree.filter((info) => POSTGRES.is(info, 0) || CONSOLE.is(info, 0));
    expect(orphans).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(orphans.filter(running)).toHaveLength(2);
    rmSync(path.join(dataDir, 'processes.json'));

    // And the start after all that is a normal one.
    const last = await startStack(ports);
    expect(orphans.filter(running)).toEqual([]);
    expect(last.output()).toContain(`Stopping the console (process ${orphans.find((o) => CONSOLE.is(o, 0))!.pid})`);
    const lastTree = processTree(last.npm.pid!);
    process.kill(-last.npm.pid!, 'SIGINT');
    expect(await allGone(lastTree)).toEqual([]);
    expect(last.output()).not.toMatch(/^\s+at /m);
  });
});
