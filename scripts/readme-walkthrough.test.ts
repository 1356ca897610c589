import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '@svc/db';
import { startDeliveryStack, type DeliveryStack } from '../apps/worker/src/delivery/delivery.testing.js';
import { ROOT } from './local-runtime.js';

const SECTION = '### Your first webhook';

/** The fenced `sh` blocks of one README section (up to the next heading of its level or above), in order. */
export function shellBlocksOf(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`README.md has no section "${heading}"`);
  const level = heading.indexOf(' ');
  const blocks: string[] = [];
  let block: string[] | null = null;
  let fenced = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('```')) {
      fenced = !fenced;
      if (fenced && line === '```sh') block = [];
      else if (!fenced && block) {
        blocks.push(block.join('\n'));
        block = null;
      }
      continue;
    }
    if (fenced) block?.push(line);
    else if (/^#+ /.test(line) && line.indexOf(' ') <= level) break;
  }
  return blocks;
}

/** Runs a script in bash (its own process group, stopped whole afterwards) and answers its exit code and output. */
async function runBash(
  script: string,
  env: Record<string, string>,
  ms: number,
): Promise<{ code: number; output: string }> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stopGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // The group has ended.
    }
  };
  const timer = setTimeout(stopGroup, ms);
  const code = await new Promise<number>((resolve) => child.on('close', (exit) => resolve(exit ?? -1)));
  clearTimeout(timer);
  // The receiver runs in the background; the script stops it, but not when a command failed first.
  stopGroup();
  return { code, output };
}

let stack: DeliveryStack;
beforeAll(async () => {
  // The real clock: the receiver checks webhook-timestamp against its own.
  stack = await startDeliveryStack({}, { realClock: true });
});
afterAll(async () => {
  await stack.close();
});

describe('README: Your first webhook', () => {
  it('finds the section and its commands', () => {
    const blocks = shellBlocksOf(readFileSync(path.join(ROOT, 'README.md'), 'utf8'), SECTION);
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    expect(blocks.join('\n')).toContain('node examples/receiver.mjs');
  });

  it('runs as written: event type, endpoint, publish, and the receiver verifies the delivery', async () => {
    const blocks = shellBlocksOf(readFileSync(path.join(ROOT, 'README.md'), 'utf8'), SECTION);
    // The commands as written, on this run's free ports instead of the documented ones (8080 and 4000).
    const receiverPort = await findFreePort();
    const written = blocks.join('\n');
    expect(written).toContain('http://localhost:8080/v1');
    expect(written).toContain('127.0.0.1:4000');
    const script = written
      .replaceAll('http://localhost:8080', stack.h.rootUrl)
      .replaceAll('PORT=4000', `PORT=${receiverPort}`)
      .replaceAll('127.0.0.1:4000', `127.0.0.1:${receiverPort}`);

    const { code, output } = await runBash(script, { KEY: stack.h.team.key }, 60_000);
    expect(code, output).toBe(0);

    const message = /^(wdm_\w+): succeeded$/m.exec(output)?.[1];
    expect(message, output).toBeDefined();
    expect(output).toContain(`verified ${message} invoice.paid {"invoice":"in_1001","amount":"19.00"}`);
    // The forged request: the receiver refused it and said why.
    expect(output).toMatch(/^401$/m);
    expect(output).toContain('rejected: No matching signature found');
    const stored = await stack.h.services.messages.getMessage({ actor: stack.h.team }, message!);
    expect(stored).toMatchObject({ status: 'succeeded', event_type: 'invoice.paid' });
  }, 90_000);

  it('in TypeScript: examples/first-webhook.ts runs after the curl version, and again, without a 409', async () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf(SECTION), readme.indexOf('\n### ', readme.indexOf(SECTION) + 1));
    expect(section).toContain('npx tsx examples/first-webhook.ts');
    const env = {
      KEY: stack.h.team.key,
      SVC_API_URL: `${stack.h.rootUrl}/v1`,
      RECEIVER_PORT: String(await findFreePort()),
    };
    // As the README runs it (npx tsx), in the checkout, where @svc/client is the workspace package built at install.
    const script = 'npx tsx examples/first-webhook.ts';
    const first = await runBash(script, env, 60_000);
    expect(first.code, first.output).toBe(0);
    const message = /^(wdm_\w+): succeeded$/m.exec(first.output)?.[1];
    expect(message, first.output).toBeDefined();
    expect(first.output).toContain(`verified ${message} invoice.paid {"invoice":"in_1002","amount":"25.00"}`);
    expect(first.output).toContain(`listed ${message} invoice.paid succeeded`);
    expect(first.output).toMatch(/^error 404 not_found \(Request-Id \S+\)$/m);

    // The fixed Idempotency-Keys: a second run answers with what the first made.
    const again = await runBash(script, env, 60_000);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain(`${message}: succeeded`);
    expect(again.output.match(/^listed /gm)).toHaveLength(1);
  }, 150_000);
});
