/**
 * `npm run build`: the production JavaScript, one ES module per process, in dist/ (or `--outdir DIR`, which must
 * be inside the repository so that the bundles find node_modules):
 *   dist/server.js  the API (apps/server/src/main.ts)
 *   dist/worker.js  the jobs (apps/worker/src/main.ts)
 *   dist/admin.js   the admin CLI (scripts/admin.ts)
 *   dist/inputs.json  the repository files the bundles were built from (scripts/admin-launcher.js reads it)
 * `--only admin` (repeatable) builds only the entry points named.
 * Run them with plain `node`. The console builds separately (`next build` in apps/console).
 *
 * esbuild bundles our own workspaces (their package.json files point at TypeScript sources) and leaves every npm
 * dependency external, resolved from node_modules at run time as before. It compiles decorators as
 * `experimentalDecorators` (from tsconfig.json) but emits no decorator metadata, exactly like tsx and vitest: every
 * type-graphql and TypeORM decorator names its type explicitly, so the bundles behave as the sources do under tsx.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { ROOT } from './local-runtime.js';

export const ENTRY_POINTS = {
  server: 'apps/server/src/main.ts',
  worker: 'apps/worker/src/main.ts',
  admin: 'scripts/admin.ts',
} as const;

/** npm packages stay in node_modules; our workspaces (@svc/*) and relative imports are bundled. */
export const dependenciesExternal: Plugin = {
  name: 'dependencies-external',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@svc/') ? undefined : { path: args.path, external: true },
    );
  },
};

/**
 * Sources find files beside them through `import.meta.url` (the SQL migrations, the repository root). In a bundle
 * that URL is the bundle's, so each source's own URL is rebuilt from the bundle's: the files keep being found
 * wherever the repository is, as long as dist/ stays inside it.
 */
function sourceUrls(outdir: string): Plugin {
  return {
    name: 'source-urls',
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const relative = path.relative(outdir, args.path).split(path.sep).join('/');
        return {
          contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`),
          loader: 'ts',
        };
      });
    },
  };
}

/** Beside the bundles: the repository files they were built from, so a launcher can tell whether they are current. */
export const BUILD_INPUTS_FILE = 'inputs.json';

/** Builds every entry point, or only those named, into `outdir` (emptied first). */
export async function buildProduction(
  outdir: string,
  only: ReadonlyArray<keyof typeof ENTRY_POINTS> = [],
): Promise<void> {
  const absolute = path.resolve(ROOT, outdir);
  if (path.relative(ROOT, absolute).startsWith('..'))
    throw new Error(`--outdir must be inside the repository (${ROOT}) so that the bundles find node_modules`);
  rmSync(absolute, { recursive: true, force: true });
  const entryPoints = Object.fromEntries(
    Object.entries(ENTRY_POINTS).filter(
      ([name]) => only.length === 0 || only.includes(name as keyof typeof ENTRY_POINTS),
    ),
  );
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints,
    metafile: true,
    outdir: absolute,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    sourcemap: true,
    logLevel: 'warning',
    plugins: [dependenciesExternal, sourceUrls(absolute)],
  });
  // The build script itself too: a change to how bundles are built makes them stale as well.
  const inputs = [...Object.keys(result.metafile.inputs), 'scripts/build.ts'].sort();
  writeFileSync(path.join(absolute, BUILD_INPUTS_FILE), `${JSON.stringify(inputs, null, 1)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'scripts/build.ts')) {
  const { values } = parseArgs({
    options: { outdir: { type: 'string', default: 'dist' }, only: { type: 'string', multiple: true, default: [] } },
  });
  const only = values.only.filter((name): name is keyof typeof ENTRY_POINTS => name in ENTRY_POINTS);
  if (only.length !== values.only.length) {
    console.error(`--only takes ${Object.keys(ENTRY_POINTS).join(', ')}`);
    process.exit(2);
  }
  buildProduction(values.outdir, only).then(
    () => console.log(`Built ${(only.length ? only : Object.keys(ENTRY_POINTS)).join(', ')} into ${values.outdir}/`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
