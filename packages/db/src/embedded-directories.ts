import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLinkedCluster, markClusterOwner } from './cluster-home.js';
import { canTraverse, type RunAs } from './embedded-user.js';

// Private directories (`/root/x`, a 0700 `mktemp -d`) are out of the postgres user's reach: the kernel checks search
// permission on every parent. As root, what Postgres needs is copied or moved into root-owned 0711 directories it can
// reach (embedded.ts says how).

export const ROOT_BASE = '/var/lib/svc-webhooks';

/** A directory owned by root and writable by root only, searchable by all (0711); made when missing. */
export function rootOwnedDirectory(dir: string, runAs: RunAs): string {
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

/**
 * The directory the cluster lives in: the requested one, or, as root when the postgres user cannot reach it, a
 * directory it can reach, with a symlink left at the requested path.
 */
export function clusterDirectory(
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
