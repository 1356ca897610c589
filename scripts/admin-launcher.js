// @ts-check
/**
 * `npm run admin`: runs the admin CLI as built JavaScript, which starts in well under a second where tsx took
 * about 4 s. It uses `dist/admin.js` when `npm run build` made it from the current sources, else its own build in
 * `.tmp/admin-cli/`, rebuilding that (about as long as one tsx start) when a source it was built from changed.
 * Plain JavaScript on purpose: this file runs before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OWN_BUILD = path.join(ROOT, '.tmp', 'admin-cli');

/**
 * True when `dir/admin.js` exists and no file it was built from (dir/inputs.json) changed after it.
 * @param {string} dir
 */
function isCurrent(dir) {
  const bundle = path.join(dir, 'admin.js');
  const inputsFile = path.join(dir, 'inputs.json');
  if (!existsSync(bundle) || !existsSync(inputsFile)) return false;
  const builtAt = statSync(bundle).mtimeMs;
  /** @type {string[]} */
  const inputs = JSON.parse(readFileSync(inputsFile, 'utf8'));
  if (!inputs.includes('scripts/admin.ts')) return false;
  return inputs.every((input) => {
    const file = path.join(ROOT, input);
    return existsSync(file) && statSync(file).mtimeMs <= builtAt;
  });
}

/** Builds the admin CLI into .tmp/admin-cli (through a directory of its own, so concurrent runs do not collide). */
function buildOwn() {
  const staging = `${OWN_BUILD}-${process.pid}`;
  const built = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'scripts/build.ts', '--only', 'admin', '--outdir', path.relative(ROOT, staging)],
    // The build's own message goes to stderr: stdout carries the CLI's JSON only.
    { cwd: ROOT, stdio: ['ignore', 2, 'inherit'] },
  );
  if (built.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    process.stderr.write(`${JSON.stringify({ error: 'the admin CLI did not build (see above)' })}\n`);
    process.exit(1);
  }
  rmSync(OWN_BUILD, { recursive: true, force: true });
  try {
    renameSync(staging, OWN_BUILD);
  } catch {
    // Another run put its build there first: it is as current as ours.
    rmSync(staging, { recursive: true, force: true });
  }
}

const dist = path.join(ROOT, 'dist');
const chosen = isCurrent(dist) ? dist : OWN_BUILD;
if (chosen === OWN_BUILD && !isCurrent(OWN_BUILD)) buildOwn();
// The bundle reads its arguments from process.argv, which are this launcher's.
await import(pathToFileURL(path.join(chosen, 'admin.js')).href);
