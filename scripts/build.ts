/**
 * `npm run build`: the production JavaScript, one ES module per process, in dist/ (or `--outdir DIR`, which must
 * be inside the repository so that the bundles find node_modules):
 *   dist/server.js  the API (apps/server/src/main.ts)
 *   dist/worker.js  the jobs (apps/worker/src/main.ts)
 *   dist/admin.js   the admin CLI (scripts/admin.ts)
 * Run them with plain `node`. The console builds separately (`next build` in apps/console).
 *
 * esbuild bundles our own workspaces (their package.json files point at TypeScript sources) and leaves every npm
 * dependency external, resolved from node_modules at run time as before. It compiles decorators as
 * `experimentalDecorators` (from tsconfig.json) but emits no decorator metadata, exactly like tsx and vitest: every
 * type-graphql and TypeORM decorator names its type explicitly, so the bundles behave as the sources do under tsx.
 */
import { readFileSync, rmSync } from 'node:fs';
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
const dependenciesExternal: Plugin = {
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

export async function buildProduction(outdir: string): Promise<void> {
  const absolute = path.resolve(ROOT, outdir);
  if (path.relative(ROOT, absolute).startsWith('..'))
    throw new Error(`--outdir must be inside the repository (${ROOT}) so that the bundles find node_modules`);
  rmSync(absolute, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRY_POINTS,
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
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'scripts/build.ts')) {
  const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } } });
  buildProduction(values.outdir).then(
    () => console.log(`Built ${Object.keys(ENTRY_POINTS).join(', ')} into ${values.outdir}/`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
