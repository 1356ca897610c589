import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** What a console build is made of besides its own files: the dependency versions and the shared compiler options. */
const SHARED_INPUTS = ['../../package-lock.json', '../../tsconfig.base.json'];
/** Written by builds and editors, not by people: they change no page. */
const IGNORED = new Set(['node_modules', '.next', 'next-env.d.ts', 'tsconfig.tsbuildinfo']);

function sourceFiles(dir: string, relative = ''): string[] {
  return readdirSync(path.join(dir, relative), { withFileTypes: true })
    .filter((entry) => !IGNORED.has(entry.name))
    .flatMap((entry) => {
      const name = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) return sourceFiles(dir, name);
      return entry.isFile() ? [name] : [];
    });
}

/**
 * The console's build ID: a hash of its sources and of the lockfile, so that the same sources always give the same
 * ID. next.config.ts makes every `next build` use it (by hand, in CI, in the Dockerfile), and `npm start` rebuilds
 * only when `.next/BUILD_ID` differs from the hash of the sources as they are now.
 */
export function consoleBuildId(consoleDir: string): string {
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(consoleDir).sort(), ...SHARED_INPUTS]) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(path.join(consoleDir, file)));
    hash.update('\0');
  }
  return `src-${hash.digest('hex').slice(0, 32)}`;
}
