import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const manifest = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
};

/**
 * `npm test` runs these suites twice: under this machine's Node and under the LTS the Docker image runs
 * (scripts/lts-node.ts), naming the version it asked for in SVC_EXPECTED_NODE. This file shows which Node each pass
 * really ran on, down to the forks vitest starts.
 */
describe('the Node the suites run on', () => {
  it('is the one the test run asked for, and one package.json allows', () => {
    const expected = process.env['SVC_EXPECTED_NODE'];
    if (expected) expect(process.versions.node).toBe(expected);
    expect(semver.satisfies(process.versions.node, manifest.engines.node), process.versions.node).toBe(true);
  });
});
