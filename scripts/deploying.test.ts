import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { readServerConfig } from '@svc/server';
import { DEPLOYMENT_LIMITS, DEFAULT_LIMITS } from '@svc/core';
import { createTestDatabase, findFreePort, loadMigrations, runMigrations } from '@svc/db';
import { buildProduction, dependenciesExternal, ENTRY_POINTS } from './build.js';
import { ROOT } from './local-runtime.js';

/**
 * docs/deploying.md is checked against the code: its table of environment variables against the reads in the code
 * each process runs, and its first-team commands for docker compose against the production build.
 */
const doc = readFileSync(path.join(ROOT, 'docs/deploying.md'), 'utf8');

type Process = 'server' | 'worker' | 'admin CLI' | 'npm start' | 'console';

/** The processes and the code each runs: the bundles' entry points, and the console's sources. */
const ENTRIES: Record<Exclude<Process, 'console'>, string> = {
  server: ENTRY_POINTS.server,
  worker: ENTRY_POINTS.worker,
  'admin CLI': ENTRY_POINTS.admin,
  'npm start': 'scripts/start.ts',
};
/** Plain scripts the processes run beside their bundles (npm start's guard, the admin CLI's launcher). */
const BESIDE: Partial<Record<Process, string[]>> = {
  'npm start': ['scripts/stack-guard.js'],
  'admin CLI': ['scripts/admin-launcher.js'],
};

/** `env.NAME`, `env?.NAME`, `env['NAME']`; and `env[expression]`, a read whose name the code computes. */
const ENV_READ =
  /\benv(?:\?\.|\.)([A-Z][A-Z0-9_]*)\b|\benv\[\s*(['"`])([A-Z][A-Z0-9_]*)\2\s*\]|\benv\[\s*([^\]'"`\s][^\]]*)\]/g;

/** Reads whose name is computed, file by file: the variables they can read. Any other computed read fails. */
const COMPUTED_READS: Record<string, string[]> = {
  'packages/core/src/config.ts': DEPLOYMENT_LIMITS.map((name) => `SVC_LIMIT_${name.toUpperCase()}`),
};

/** Matches that are not reads by the process: text it shows, not code it runs. */
const NOT_READS: Record<string, string[]> = {
  // The receiver snippet the endpoint page shows (a template string), for the receiver's own process.
  'apps/console/app/(console)/endpoints/[id]/verify-snippets.ts': ['WEBHOOK_SECRET'],
};

function readsIn(files: readonly string[]): Map<string, Set<string>> {
  const reads = new Map<string, Set<string>>();
  for (const file of files) {
    const source = readFileSync(path.join(ROOT, file), 'utf8');
    // Destructuring hides the names from ENV_READ: read each variable by name instead.
    if (/\}\s*=\s*(?:process\.)?env\b/.test(source)) throw new Error(`${file} destructures the environment`);
    for (const match of source.matchAll(ENV_READ)) {
      const names = match[4] !== undefined ? COMPUTED_READS[file] : [match[1] ?? match[3]!];
      if (!names) throw new Error(`${file} reads env[${match[4]}]: name its variables in COMPUTED_READS of this test`);
      for (const name of names) {
        if (NOT_READS[file]?.includes(name)) continue;
        if (!reads.has(name)) reads.set(name, new Set());
        reads.get(name)!.add(file);
      }
    }
  }
  return reads;
}

/** The repository files whose code ends up in the entry point's bundle (after tree shaking), as esbuild bundles it. */
async function bundledFiles(entry: string): Promise<string[]> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    outdir: path.join(ROOT, '.tmp/deploying-scan'),
    platform: 'node',
    format: 'esm',
    target: 'node20',
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    logLevel: 'error',
    plugins: [dependenciesExternal],
  });
  const output = Object.values(result.metafile.outputs).find((candidate) => candidate.entryPoint !== undefined)!;
  return Object.entries(output.inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([file]) => file);
}

/** The console's own sources: what `next build` compiles (tests and generated types aside, which read nothing). */
function consoleFiles(dir = 'apps/console'): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory())
      return ['node_modules', '.next', 'test-results'].includes(entry.name) ? [] : consoleFiles(relative);
    return /\.(ts|tsx|js|mjs)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [relative] : [];
  });
}

interface Row {
  variable: string;
  readBy: string[];
  defaultText: string;
}

/** The rows of the table under "## Environment variables": one variable per row. */
function tableRows(): Row[] {
  const section = doc.split(/^## Environment variables$/m)[1]!.split(/^## /m)[0]!;
  return section
    .split('\n')
    .filter((line) => /^\| `[A-Z]/.test(line))
    .map((line) => {
      const [variable = '', readBy = '', defaultText = ''] = line
        .split(' | ')
        .map((cell) => cell.replace(/^\|\s*/, '').trim());
      expect(variable, line).toMatch(/^`[A-Z][A-Z0-9_]*`$/);
      return {
        variable: variable.slice(1, -1),
        readBy: readBy.split(',').map((name) => name.trim()),
        defaultText,
      };
    });
}

describe('docs/deploying.md, the environment variables', () => {
  let readsBy: Map<Process, Map<string, Set<string>>>;

  beforeAll(async () => {
    readsBy = new Map();
    for (const [name, entry] of Object.entries(ENTRIES) as Array<[Exclude<Process, 'console'>, string]>)
      readsBy.set(name, readsIn([...(await bundledFiles(entry)), ...(BESIDE[name] ?? [])]));
    readsBy.set('console', readsIn(consoleFiles()));
  }, 60_000);

  it('lists every variable a process reads, and only those, once each', () => {
    const rows = tableRows();
    const documented = rows.map((row) => row.variable);
    expect(new Set(documented).size).toBe(documented.length);
    const read = new Set([...readsBy.values()].flatMap((reads) => [...reads.keys()]));
    // The scan finds the variables everyone knows are read; an empty scan would pass the comparison below.
    for (const known of ['DATABASE_URL', 'SVC_ENCRYPTION_KEY', 'SVC_LIMIT_SERVICE_CONCURRENCY', 'SVC_API_URL'])
      expect(read).toContain(known);
    const where = (name: string) =>
      [...readsBy].flatMap(([process, reads]) => [...(reads.get(name) ?? [])].map((file) => `${process}: ${file}`));
    const undocumented = [...read].filter((name) => !documented.includes(name));
    expect(
      undocumented.map((name) => `${name} (${where(name).join(', ')})`),
      'read by a process but not in the table',
    ).toEqual([]);
    // SVC_TEST_DATABASE_URL: bundled with @svc/db, read by tests only; its row says so.
    const unread = documented.filter((name) => !read.has(name));
    expect(unread, 'in the table but read by no process').toEqual([]);
  });

  it("holds every variable of the README's Configuration table and docs/operations.md's tracing table", () => {
    const documented = new Set(tableRows().map((row) => row.variable));
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')
      .split(/^## Configuration$/m)[1]!
      .split(/^## /m)[0]!;
    const tracing = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8')
      .split(/^## Tracing$/m)[1]!
      .split(/^## /m)[0]!;
    const named = [readme, tracing].flatMap((text) =>
      text
        .split('\n')
        .filter((line) => line.startsWith('| `'))
        .flatMap((line) =>
          [...line.split(' | ')[0]!.matchAll(/`([A-Z][A-Z0-9_]+)(?:=[^`]*)?`/g)].map((match) => match[1]!),
        ),
    );
    expect(named).toContain('SVC_LIMIT_SERVICE_CONCURRENCY');
    expect(named).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    // The exporter's own variables (OTEL_EXPORTER_OTLP_HEADERS, ...) are named under the table, not in it.
    expect(named.filter((name) => !documented.has(name) && name !== 'OTEL_EXPORTER_OTLP_HEADERS')).toEqual([]);
  });

  it('says which processes read each variable, and each one it names does', () => {
    const processes = new Set<string>([...readsBy.keys(), 'tests']);
    for (const row of tableRows()) {
      for (const reader of row.readBy) {
        expect(processes, `${row.variable}: "${reader}"`).toContain(reader);
        if (reader === 'tests') continue;
        expect(readsBy.get(reader as Process)!.has(row.variable), `${row.variable} read by ${reader}`).toBe(true);
      }
    }
    // The three a server and a worker need are read by both.
    const row = (name: string) => tableRows().find((candidate) => candidate.variable === name)!;
    for (const name of ['DATABASE_URL', 'SVC_ENCRYPTION_KEY', 'SVC_PUBLIC_BASE_URL'])
      expect(row(name).readBy).toEqual(expect.arrayContaining(['server', 'worker']));
  });

  it('gives the defaults the configuration code applies', () => {
    const defaults = new Map(tableRows().map((row) => [row.variable, row.defaultText]));
    const production = readServerConfig(
      { SVC_PUBLIC_BASE_URL: 'https://webhooks.example.com', SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') },
      'production',
    );
    expect(defaults.get('SVC_LIMIT_SERVICE_CONCURRENCY')).toBe(
      `${DEFAULT_LIMITS.service_concurrency.value} (the spec's limit)`,
    );
    expect(production.limits.service_concurrency.value).toBe(6);
    expect(defaults.get('SVC_LIMIT_DISPATCH_RATE')).toBe(String(production.limits.dispatch_rate.value));
    expect(defaults.get('SVC_DB_POOL_SIZE')).toBe(String(production.poolSize));
    expect(defaults.get('PORT')).toBe(String(production.port));
    expect(defaults.get('HOST')).toContain(`server: ${production.host}`);
    expect(defaults.get('HOST')).toContain(`\`npm start\`: ${readServerConfig({}, 'local').host}`);
    expect(defaults.get('SVC_REGION')).toBe(`\`${production.region}\``);
    expect(defaults.get('SVC_SERVICE_ID')).toBe(`\`${production.serviceId}\``);
    expect(production.urlPolicy.allowLoopback).toBe(false);
    expect(defaults.get('SVC_ALLOW_LOOPBACK_RECEIVERS')).toBe('`npm start`: 1; otherwise 0');
    // Raising it is read as documented.
    const raised = readServerConfig(
      { SVC_PUBLIC_BASE_URL: 'https://webhooks.example.com', SVC_LIMIT_SERVICE_CONCURRENCY: '200' },
      'production',
    );
    expect(raised.limits.service_concurrency.value).toBe(200);
  });
});

describe('docs/deploying.md, the first team and key in docker compose', () => {
  let databaseUrl: string;
  let drop: (() => Promise<void>) | undefined;
  const outdir = path.join(ROOT, 'node_modules/.cache', `svc-deploying-test-${randomBytes(4).toString('hex')}`);

  beforeAll(async () => {
    await buildProduction(outdir, ['server', 'admin']);
    const database = await createTestDatabase();
    databaseUrl = database.url;
    drop = database.drop;
  }, 60_000);
  afterAll(async () => {
    await drop?.();
    rmSync(outdir, { recursive: true, force: true });
  });

  /**
   * The environment docker-compose.yml gives the server service, with the shell's variables it asks for, and the
   * database it names replaced by the test's (the compose host `postgres` is not here).
   */
  function composeServerEnvironment(shell: Record<string, string>): Record<string, string> {
    const compose = parseYaml(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { environment?: Record<string, string> }>;
    };
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(compose.services['server']!.environment ?? {}))
      env[name] = String(value).replace(
        /\$\{([A-Z_]+)(?::([?-])([^}]*))?\}/g,
        (_, variable: string, kind?: string, fallback?: string) => {
          if (shell[variable] !== undefined) return shell[variable];
          if (kind === '-') return fallback ?? '';
          throw new Error(`docker compose would stop: ${fallback}`);
        },
      );
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['DATABASE_URL', 'SVC_ENCRYPTION_KEY']));
    return { ...env, DATABASE_URL: databaseUrl };
  }

  /** The admin CLI's arguments in the page's `docker compose run --rm server node dist/admin.js ...` lines. */
  function documentedAdminCommands(): string[][] {
    return [...doc.matchAll(/^docker compose run --rm server node dist\/admin\.js (.+)$/gm)].map((match) =>
      match[1]!.trim().split(/\s+/),
    );
  }

  function run(entry: 'server' | 'admin', args: string[], env: Record<string, string>) {
    const child = spawn(process.execPath, [path.join(outdir, `${entry}.js`), ...args], {
      cwd: '/',
      env: { PATH: process.env['PATH'] ?? '', NODE_ENV: 'production', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, exited, output: () => ({ stdout, stderr }) };
  }

  it('gives the server and the worker the same value of every setting both must agree on', () => {
    const compose = parseYaml(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { environment?: Record<string, string> }>;
    };
    const [server, worker] = ['server', 'worker'].map((name) => compose.services[name]!.environment ?? {});
    // What a server and a worker of one deployment read alike (the table's rows read by both, but the ports, which
    // they read only for npm start's defaults).
    const shared = tableRows()
      .filter((row) => row.readBy.includes('server') && row.readBy.includes('worker'))
      .map((row) => row.variable)
      .filter((name) => !['PORT', 'CONSOLE_PORT', 'LOG_LEVEL'].includes(name) && !name.startsWith('OTEL_'));
    expect(shared).toEqual(expect.arrayContaining(['DATABASE_URL', 'SVC_ENCRYPTION_KEY', 'SVC_CONSOLE_URL']));
    expect(shared.filter((name) => server![name] !== worker![name])).toEqual([]);
  });

  it('team create and key create, as the page runs them, give a key the server accepts', async () => {
    const commands = documentedAdminCommands();
    expect(commands.map((args) => args.slice(0, 2).join(' '))).toEqual(['team create', 'key create']);
    const env = composeServerEnvironment({ SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') });

    const team = run('admin', commands[0]!, env);
    expect(await team.exited, team.output().stderr).toBe(0);
    const created = JSON.parse(team.output().stdout) as { team_id: string; name: string; payment_card: boolean };
    expect(created).toMatchObject({ name: 'acme', payment_card: true });

    const keyArgs = commands[1]!.map((arg) => (arg === 'team_...' ? created.team_id : arg));
    expect(keyArgs).toContain(created.team_id);
    const key = run('admin', keyArgs, env);
    expect(await key.exited, key.output().stderr).toBe(0);
    const issued = JSON.parse(key.output().stdout) as { key_id: string; secret: string };
    expect(issued.secret).toMatch(/^svc_sk_/);

    const port = await findFreePort();
    const server = run('server', [], { ...env, PORT: String(port), HOST: '127.0.0.1' });
    try {
      let ready = false;
      for (let i = 0; i < 300 && !ready; i += 1) {
        ready = (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200;
        if (!ready) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(ready, JSON.stringify(server.output())).toBe(true);
      const tenant = await fetch(`http://127.0.0.1:${port}/v1/tenants`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${issued.secret}`,
          'idempotency-key': 'first-tenant',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ external_id: 'acme', name: 'Acme Inc' }),
      });
      expect(tenant.status, await tenant.clone().text()).toBe(201);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 120_000);
});

describe('docs/deploying.md, upgrades and sizing', () => {
  it('a release that knows fewer migrations starts on a database migrated further: nothing refused, nothing applied (so rollback is a restore)', async () => {
    const database = await createTestDatabase();
    try {
      const migrations = loadMigrations();
      expect(await runMigrations(database.url, migrations.slice(0, -3))).toEqual([]);
      expect(migrations.some((migration) => /down|revert|rollback/i.test(migration.id))).toBe(false);
    } finally {
      await database.drop();
    }
  });

  it('quotes its sizing figures from benchmarks.md and scaling.md, inventing none', () => {
    const sizing = doc.split(/^## Sizing$/m)[1]!.split(/^## /m)[0]!;
    const sources = ['docs/benchmarks.md', 'docs/scaling.md']
      .map((file) => readFileSync(path.join(ROOT, file), 'utf8'))
      .join('\n')
      .replace(/\s+/g, ' ');
    const numbers = [...sizing.matchAll(/\d[\d,.]*/g)].map((match) => match[0].replace(/[.,]$/, ''));
    expect(numbers.length).toBeGreaterThan(30);
    expect(
      numbers.filter((number) => !new RegExp(`(^|[^\\d.,])${number.replace(/[.,]/g, '\\$&')}(?![\\d])`).test(sources)),
    ).toEqual([]);
    const quotes = [...sizing.replace(/\s+/g, ' ').matchAll(/"([^"]+)"/g)].map((match) => match[1]!);
    expect(quotes.length).toBeGreaterThan(2);
    expect(quotes.filter((quote) => !sources.includes(quote))).toEqual([]);
  });
});

describe('docs/deploying.md, its links', () => {
  /** GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces as -. */
  const anchor = (heading: string) =>
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');

  it('lead to pages and headings that exist', () => {
    const links = [...doc.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1]!)
      .filter((link) => !/^https?:/.test(link));
    expect(links.length).toBeGreaterThan(10);
    const broken = links.filter((link) => {
      const [file = '', hash] = link.split('#');
      const target = path.join(ROOT, 'docs', file || 'deploying.md');
      if (!existsSync(target)) return true;
      if (hash === undefined) return false;
      const headings = [...readFileSync(target, 'utf8').matchAll(/^#+ (.+)$/gm)].map((match) => anchor(match[1]!));
      return !headings.includes(hash);
    });
    expect(broken).toEqual([]);
  });
});
