import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.resolve(PACKAGE, '../..');
// Inside the checkout, so the built files find the package's dependencies in node_modules as they would installed.
const OUT = path.join(ROOT, '.tmp', `client-dist-${process.pid}`);

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe('the published package', () => {
  it('builds, and plain Node loads what package.json exports, types beside it', async () => {
    mkdirSync(path.dirname(OUT), { recursive: true });
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '-p', path.join(PACKAGE, 'tsconfig.build.json'), '--outDir', OUT]);

    const manifest = JSON.parse(readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
    expect(manifest.files).toContain('dist');
    const exported = manifest.exports['.'] as { types: string; default: string };
    for (const file of [exported.types, exported.default, manifest.main, manifest.types])
      expect(existsSync(path.join(OUT, path.relative('dist', file))), file).toBe(true);
    expect(existsSync(path.join(OUT, 'client.test.js'))).toBe(false);

    // Signs like the service (Standard Webhooks) and verifies with the built package, outside any bundler.
    const entry = path.join(OUT, path.relative('dist', exported.default));
    const script = `
      import { createHmac } from 'node:crypto';
      const client = await import(${JSON.stringify(entry)});
      const secret = 'whsec_' + Buffer.alloc(32, 3).toString('base64');
      const timestamp = Math.floor(Date.now() / 1000);
      const body = '{"invoice":"in_1"}';
      const signature = createHmac('sha256', Buffer.alloc(32, 3)).update('wdm_1.' + timestamp + '.' + body).digest('base64');
      const headers = { 'webhook-id': 'wdm_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': 'v1,' + signature };
      let tampered = 'verified';
      try { client.verify(headers, body.replace('1', '2'), secret); } catch (error) { tampered = error.name; }
      console.log(JSON.stringify({
        exports: Object.keys(client).sort(),
        verified: client.verify(headers, Buffer.from(body), secret).id,
        tampered,
        client: typeof client.createClient({ baseUrl: 'http://127.0.0.1:1/v1', key: 'svc_sk_x' }).list,
      }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    expect(JSON.parse(stdout)).toEqual({
      exports: ['DEFAULT_RETRY_POLICY', 'SvcApiError', 'WebhookVerificationError', 'createClient', 'verify'],
      verified: 'wdm_1',
      tampered: 'WebhookVerificationError',
      client: 'function',
    });
  }, 60_000);
});
