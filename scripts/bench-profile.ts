/**
 * Summarises a V8 CPU profile (.cpuprofile, as `npm run bench` with BENCH_PROFILE=1 or `node --cpu-prof` writes
 * them): the top functions by self time and self time by package. Usable on its own:
 *
 *   npx tsx scripts/bench-profile.ts .tmp/bench-profile/worker-fanout1.cpuprofile [top]
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  functions: { name: string; ms: number; share: number }[];
  packages: { name: string; ms: number; share: number }[];
}

/** Where a script URL comes from: a package under node_modules, a workspace folder, node itself, or V8. */
function packageOf(url: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node internals';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  const workspace = /\/(apps\/[^/]+|packages\/[^/]+|scripts)\//.exec(url);
  return workspace ? workspace[1]! : url;
}

export function summariseProfile(profile: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    total += us;
    const where = frame.url
      ? `${frame.url.replace(/^file:\/\/.*?\/(node_modules|apps|packages|scripts)\//, '$1/')}:${frame.lineNumber + 1}`
      : '';
    const name = `${frame.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    const pkg =
      frame.functionName === '(idle)'
        ? '(idle)'
        : frame.functionName === '(garbage collector)'
          ? '(GC)'
          : packageOf(frame.url);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const rank = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: Math.round(us / 1000), share: total ? us / total : 0 }));
  return { totalMs: Math.round(total / 1000), functions: rank(functions), packages: rank(packages) };
}

export function formatSummary(title: string, summary: ProfileSummary): string {
  const line = (entry: { name: string; ms: number; share: number }) =>
    `  ${(entry.share * 100).toFixed(1).padStart(5)}%  ${String(entry.ms).padStart(6)} ms  ${entry.name}`;
  return [
    `${title}: ${summary.totalMs} ms sampled`,
    ' self time by package:',
    ...summary.packages.map(line),
    ' top functions by self time:',
    ...summary.functions.map(line),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: tsx scripts/bench-profile.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  console.log(formatSummary(file, summariseProfile(profile, Number(process.argv[3] ?? 20))));
}
