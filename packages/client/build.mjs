// @ts-check
/**
 * Builds the published package into dist/: `npm ci` runs it (the `prepare` script), and so does `npm pack`.
 *
 * - dist/index.js: one ES module with openapi-fetch, standardwebhooks and eventsource-parser (listen's SSE parser)
 *   bundled in (esbuild), so the package has no runtime dependencies: a project installs the tarball alone, offline
 *   included.
 * - dist/*.d.ts: the declarations tsc emits. They use openapi-fetch's and openapi-typescript-helpers' types, whose
 *   declaration files are copied to dist/vendor/ and imported from there, so the types need nothing installed either.
 * - dist/THIRD_PARTY_NOTICES.md: the licences of the bundled packages.
 * Everything is built beside dist/ and moved in file by file (a rename replaces one file at once), so a program or a
 * test that imports the package while it is rebuilt (`npm pack` in one test, beside another) never finds dist/
 * empty or half written.
 * Plain JavaScript on purpose: it runs during `npm ci`, before anything is compiled.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const PACKAGE = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.join(PACKAGE, 'dist');
const STAGE = path.join(PACKAGE, `.build-${process.pid}`);
const require = createRequire(import.meta.url);

/** The type-only dependencies whose declarations ship in dist/vendor/, by the specifier the declarations import. */
const VENDORED_TYPES = {
  'openapi-fetch': 'openapi-fetch/dist/index.d.mts',
  'openapi-typescript-helpers': 'openapi-typescript-helpers/dist/index.d.mts',
};

/** Every file under a directory, relative to it. */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

/** Points a declaration file's imports of the vendored packages at their copies, relative to it. */
function rewriteSpecifiers(file) {
  let text = readFileSync(file, 'utf8');
  for (const name of Object.keys(VENDORED_TYPES)) {
    let relative = path
      .relative(path.dirname(file), path.join(STAGE, 'vendor', `${name}.js`))
      .split(path.sep)
      .join('/');
    if (!relative.startsWith('.')) relative = `./${relative}`;
    text = text.replaceAll(`'${name}'`, `'${relative}'`).replaceAll(`"${name}"`, `"${relative}"`);
  }
  writeFileSync(file, text);
}

/** The name, version, licence and licence text of every npm package the bundle took code from. */
function thirdPartyNotices(inputs) {
  const roots = new Set();
  for (const input of inputs) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input.split(path.sep).join('/'));
    if (match?.[1]) roots.add(match[1]);
  }
  const sections = [...roots].sort().map((root) => {
    const dir = path.resolve(PACKAGE, root);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const licenceFile = readdirSync(dir).find((name) => /^licen[cs]e/i.test(name));
    const text = licenceFile ? readFileSync(path.join(dir, licenceFile), 'utf8').trim() : `${manifest.license}`;
    return `## ${manifest.name} ${manifest.version} (${manifest.license})\n\n${text}\n`;
  });
  return `# Third-party code in dist/index.js\n\n${sections.join('\n')}`;
}

try {
  const tsc = require.resolve('typescript/bin/tsc');
  const project = path.join(PACKAGE, 'tsconfig.build.json');
  execFileSync(process.execPath, [tsc, '-p', project, '--emitDeclarationOnly', '--outDir', STAGE], {
    stdio: 'inherit',
  });
  mkdirSync(path.join(STAGE, 'vendor'), { recursive: true });
  for (const [name, file] of Object.entries(VENDORED_TYPES))
    copyFileSync(require.resolve(file), path.join(STAGE, 'vendor', `${name}.d.ts`));
  for (const file of filesUnder(STAGE)) if (file.endsWith('.d.ts')) rewriteSpecifiers(path.join(STAGE, file));

  const bundled = await build({
    absWorkingDir: PACKAGE,
    entryPoints: [path.join(PACKAGE, 'src/index.ts')],
    outfile: path.join(STAGE, 'index.js'),
    bundle: true,
    format: 'esm',
    // Node 20+ and any runtime with fetch: nothing in the bundle imports a Node module.
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2022',
    sourcemap: true,
    // The licences of what is bundled (openapi-fetch, standardwebhooks, eventsource-parser and theirs) are in
    // THIRD_PARTY_NOTICES.md.
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  writeFileSync(path.join(STAGE, 'THIRD_PARTY_NOTICES.md'), thirdPartyNotices(Object.keys(bundled.metafile.inputs)));

  const built = filesUnder(STAGE);
  for (const file of built) {
    mkdirSync(path.dirname(path.join(DIST, file)), { recursive: true });
    renameSync(path.join(STAGE, file), path.join(DIST, file));
  }
  // What an earlier build made and this one did not (a source file removed since).
  for (const file of filesUnder(DIST)) if (!built.includes(file)) rmSync(path.join(DIST, file));
} finally {
  rmSync(STAGE, { recursive: true, force: true });
}
