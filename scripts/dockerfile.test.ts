import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTRY_POINTS } from './build.js';
import { ROOT } from './local-runtime.js';
import { LTS_NODE_VERSION } from './lts-node.js';

/** There is no Docker engine here: these read the Dockerfile and docker-compose.yml the way `docker build` would. */
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const compose = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');

/** Instructions of the Dockerfile, comments dropped and continuation lines joined. */
function instructions(text: string): Array<{ op: string; args: string }> {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [op = '', ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

/** The workspace directories package.json lists (globs like packages/* expanded), relative to the root. */
function workspaces(): string[] {
  const { workspaces: patterns } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    workspaces: string[];
  };
  return patterns
    .flatMap((pattern) =>
      pattern.endsWith('/*')
        ? readdirSync(path.join(ROOT, pattern.slice(0, -2)), { withFileTypes: true })
            .filter((entry) => entry.isDirectory())
            .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
        : [pattern],
    )
    .filter((dir) => existsSync(path.join(ROOT, dir, 'package.json')))
    .sort();
}

const buildStage = (() => {
  const all = instructions(dockerfile);
  const secondFrom = all.findIndex((instruction, index) => index > 0 && instruction.op === 'FROM');
  return all.slice(0, secondFrom === -1 ? undefined : secondFrom);
})();

describe('Dockerfile', () => {
  it('copies the package.json of every workspace in package.json before npm ci, so the install sees them all', () => {
    const install = buildStage.findIndex(
      (instruction) => instruction.op === 'RUN' && /\bnpm ci\b/.test(instruction.args),
    );
    expect(install).toBeGreaterThan(0);
    const copied = buildStage
      .slice(0, install)
      .filter((instruction) => instruction.op === 'COPY')
      .map((instruction) => /^(\S+)\/package\.json\s+(\S+?)\/?$/.exec(instruction.args))
      .filter((match) => match !== null && match[1] === match[2])
      .map((match) => match![1])
      .sort();
    expect(workspaces().length).toBeGreaterThan(3);
    expect(copied).toEqual(workspaces());
  });

  it('builds and runs on a supported Node LTS (22 or 24), Debian bookworm slim, the one npm test runs the suites on', () => {
    const bases = instructions(dockerfile)
      .filter((instruction) => instruction.op === 'FROM')
      .map((instruction) => instruction.args.split(/\s+/)[0]);
    expect(bases).toHaveLength(2);
    for (const base of bases) expect(base).toMatch(/^node:(22|24)-bookworm-slim$/);
    // npm test's second pass of the suites (scripts/lts-node.ts) runs the image's major version.
    for (const base of bases) expect(base).toBe(`node:${LTS_NODE_VERSION.split('.')[0]}-bookworm-slim`);
  });

  it('builds the production JavaScript and runs it with plain node, never through tsx', () => {
    expect(
      buildStage.some((instruction) => instruction.op === 'RUN' && /\bnpm run build\b/.test(instruction.args)),
    ).toBe(true);
    const cmd = instructions(dockerfile)
      .filter((instruction) => instruction.op === 'CMD')
      .at(-1);
    expect(JSON.parse(cmd!.args)).toEqual(['node', '--enable-source-maps', `dist/server.js`]);
    expect(dockerfile).not.toMatch(/\btsx\b/);
  });
});

describe('docker-compose.yml', () => {
  it('runs the built server and worker with plain node and gives every process its public URL', () => {
    const commands = [...compose.matchAll(/^\s*command:\s*(\[.*\])\s*$/gm)].map(
      (match) => JSON.parse(match[1]!.replaceAll("'", '"')) as string[],
    );
    expect(commands).toEqual(
      expect.arrayContaining([
        ['node', '--enable-source-maps', 'dist/server.js'],
        ['node', '--enable-source-maps', 'dist/worker.js'],
      ]),
    );
    expect(Object.keys(ENTRY_POINTS)).toEqual(expect.arrayContaining(['server', 'worker', 'admin']));
    expect(compose).not.toMatch(/\btsx\b/);
    // The server and the worker both refuse to start without it.
    expect(compose.match(/^\s*SVC_PUBLIC_BASE_URL:/gm)?.length).toBe(2);
  });
});
