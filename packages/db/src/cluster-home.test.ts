import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLinkedCluster, markClusterOwner, removeAbandonedClusters } from './cluster-home.js';

const base = mkdtempSync(path.join(tmpdir(), 'svc-cluster-home-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A checkout's data directory path (its parent made), as `npm start` has it: <checkout>/.data/pg. */
function dataDirOf(checkout: string): string {
  mkdirSync(path.join(base, checkout, '.data'), { recursive: true });
  return path.join(base, checkout, '.data', 'pg');
}

describe('clusters kept away from their checkout', () => {
  it('removes those whose checkout or data directory is gone, and nothing else', () => {
    const home = path.join(base, 'home');
    mkdirSync(home);
    const deleted = createLinkedCluster(home, dataDirOf('deleted-clone'));
    const restarted = createLinkedCluster(home, dataDirOf('restarted'));
    const kept = createLinkedCluster(home, dataDirOf('kept'));
    const running = createLinkedCluster(home, dataDirOf('running'));
    // A cluster from before markers, and the binaries' copy: not ours to judge.
    const unmarked = path.join(home, 'cluster-unmarked');
    const binaries = path.join(home, 'postgres-linux-x64-17.9.0');
    mkdirSync(unmarked);
    mkdirSync(binaries);
    // A cluster found again by its checkout gets its marker then.
    const legacy = path.join(home, 'cluster-legacy');
    mkdirSync(legacy);
    symlinkSync(legacy, dataDirOf('legacy'));
    markClusterOwner(legacy, dataDirOf('legacy'));
    for (const cluster of [deleted, restarted, kept, running, legacy])
      writeFileSync(path.join(cluster, 'PG_VERSION'), '17\n');
    expect(readdirSync(home).filter((name) => name.endsWith('.owner.json'))).toHaveLength(5);

    rmSync(path.join(base, 'deleted-clone'), { recursive: true });
    // `rm -rf .data` and a start afresh: the path is a directory of its own now, not the link.
    rmSync(path.join(base, 'restarted', '.data', 'pg'));
    mkdirSync(path.join(base, 'restarted', '.data', 'pg'));
    // Its checkout is gone too, but a postmaster still runs in it (this process stands for it).
    rmSync(path.join(base, 'running'), { recursive: true });
    writeFileSync(path.join(running, 'postmaster.pid'), `${process.pid}\n${running}\n`);

    expect(removeAbandonedClusters(home).sort()).toEqual([deleted, restarted].sort());
    for (const cluster of [deleted, restarted]) {
      expect(existsSync(cluster)).toBe(false);
      expect(existsSync(`${cluster}.owner.json`)).toBe(false);
    }
    for (const dir of [kept, running, legacy, unmarked, binaries]) expect(existsSync(dir)).toBe(true);
    expect(removeAbandonedClusters(home)).toEqual([]);

    // A cluster deleted by hand leaves its marker, which goes at the next sweep.
    rmSync(kept, { recursive: true });
    removeAbandonedClusters(home);
    expect(existsSync(`${kept}.owner.json`)).toBe(false);
    expect(existsSync(`${running}.owner.json`)).toBe(true);
  });

  it('leaves a home that does not exist alone', () => {
    expect(removeAbandonedClusters(path.join(base, 'missing'))).toEqual([]);
  });
});
