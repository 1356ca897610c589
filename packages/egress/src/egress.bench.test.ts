import { describe, expect, it } from 'vitest';
import { measurePostsPerSecond } from './egress.bench.js';
import { httpReceiver } from './testing/receivers.js';

describe('measurePostsPerSecond', () => {
  it('measures raw undici and the egress client against the same receiver', async () => {
    const target = await httpReceiver((_req, res) => res.writeHead(204).end());
    try {
      const url = `http://127.0.0.1:${target.port}/`;
      const raw = await measurePostsPerSecond({ url, seconds: 0.3, concurrency: 4 });
      const egress = await measurePostsPerSecond({ url, seconds: 0.3, concurrency: 4, via: 'egress' });
      for (const result of [raw, egress]) {
        expect(result.failed).toBe(0);
        expect(result.ok).toBeGreaterThan(10);
        expect(result.postsPerSecond).toBeGreaterThan(0);
      }
      expect(egress.via).toBe('egress');
    } finally {
      await target.close();
    }
  });
});
