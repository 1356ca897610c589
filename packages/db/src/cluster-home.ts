import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

/**
 * Persistent clusters that live away from their data directory (as root, when the postgres user cannot reach a
 * checkout: see embedded.ts) sit in a home directory (/var/lib/svc-webhooks) as `cluster-*`, each with a marker
 * `cluster-*.owner.json` naming the data directory whose symlink points at it. Deleting the checkout (or its .data)
 * leaves the cluster without an owner; the next start as root removes it.
 */
const OWNER_SUFFIX = '.owner.json';

interface OwnerMarker {
  /** The path of the symlink that leads to the cluster, e.g. /root/svc-webhooks/.data/pg */
  data_dir: string;
}

/** A new cluster directory in `home`, linked from `dataDir` (which must not exist) and marked as its own. */
export function createLinkedCluster(home: string, dataDir: string): string {
  const cluster = mkdtempSync(path.join(home, 'cluster-'));
  // Linked before it is marked: a cluster without a marker is never removed, so a start that sweeps meanwhile
  // leaves this one alone.
  symlinkSync(cluster, dataDir);
  markClusterOwner(cluster, dataDir);
  return cluster;
}

/** Writes the marker of a cluster that has none (one made before markers existed, found again by its checkout). */
export function markClusterOwner(cluster: string, dataDir: string): void {
  const marker = `${cluster}${OWNER_SUFFIX}`;
  if (existsSync(marker)) return;
  const owner: OwnerMarker = { data_dir: dataDir };
  writeFileSync(marker, `${JSON.stringify(owner)}\n`, { mode: 0o600 });
}

function linksTo(link: string, cluster: string): boolean {
  try {
    return lstatSync(link).isSymbolicLink() && path.resolve(path.dirname(link), readlinkSync(link)) === cluster;
  } catch {
    return false;
  }
}

/** True when the cluster's postmaster.pid names a live process (a reused PID counts too: better kept than lost). */
function postmasterRuns(cluster: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(cluster, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the clusters in `home` whose data directory no longer links to them (the checkout or its .data was
 * deleted, or starts afresh elsewhere), and returns their paths (and the markers of clusters deleted by hand). Only directories with our marker, and only when no
 * postmaster runs in them: anything else in `home` is left alone.
 */
export function removeAbandonedClusters(home: string): string[] {
  if (!existsSync(home)) return [];
  const removed: string[] = [];
  for (const entry of readdirSync(home, { withFileTypes: true })) {
    // A marker whose cluster was deleted by hand has nothing left to name.
    if (entry.isFile() && entry.name.startsWith('cluster-') && entry.name.endsWith(OWNER_SUFFIX)) {
      const cluster = path.join(home, entry.name.slice(0, -OWNER_SUFFIX.length));
      if (!existsSync(cluster)) rmSync(path.join(home, entry.name), { force: true });
      continue;
    }
    if (!entry.isDirectory() || !entry.name.startsWith('cluster-')) continue;
    const cluster = path.join(home, entry.name);
    let owner: unknown;
    try {
      owner = (JSON.parse(readFileSync(`${cluster}${OWNER_SUFFIX}`, 'utf8')) as Partial<OwnerMarker>).data_dir;
    } catch {
      continue;
    }
    if (typeof owner !== 'string' || linksTo(owner, cluster) || postmasterRuns(cluster)) continue;
    rmSync(cluster, { recursive: true, force: true });
    rmSync(`${cluster}${OWNER_SUFFIX}`, { force: true });
    removed.push(cluster);
  }
  return removed;
}
