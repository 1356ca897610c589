import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './local-runtime.js';

interface LockedPackage {
  version?: string;
  engines?: Record<string, string> | string[];
}

const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
/** What `npm ci` installed here: npm's own record of node_modules (the lock may name packages no platform gets). */
const installed = JSON.parse(readFileSync(path.join(ROOT, 'node_modules/.package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

/** The installed packages with the Node versions each declares. */
function installedNodeRanges(): Array<{ name: string; range: string }> {
  return Object.entries(installed.packages).flatMap(([where, entry]) => {
    if (!where.includes('node_modules/') || Array.isArray(entry.engines) || !entry.engines?.['node']) return [];
    return [
      {
        name: `${where.slice(where.lastIndexOf('node_modules/') + 13)}@${entry.version}`,
        range: entry.engines['node'],
      },
    ];
  });
}

describe('Node versions', () => {
  it('every locked dependency supports every Node 20 the README allows (npm ci prints no EBADENGINE)', () => {
    expect(manifest.engines.node).toBe('>=20.19');
    const node20 = '>=20.19.0 <21.0.0-0';
    const ranges = installedNodeRanges();
    expect(ranges.length).toBeGreaterThan(100);
    const unsupported = ranges.filter(({ range }) => !semver.subset(node20, range, { includePrerelease: false }));
    expect(unsupported).toEqual([]);
  });
});
