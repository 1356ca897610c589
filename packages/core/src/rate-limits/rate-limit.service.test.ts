import { describe, expect, it } from 'vitest';
import { ManualClock, SECOND } from '../common/clock.js';
import { limitsWith } from '../catalog/limits.js';
import { isServiceError } from '../common/errors.js';
import { useTestCore } from '../testing/test-core.js';
import { LEASE_MS, RateLimitService } from './rate-limit.service.js';

const clock = new ManualClock('2026-11-02T10:00:00Z');
const core = useTestCore(clock);

/** Takes `count` tokens at once; answers how many were granted. */
async function takeMany(service: RateLimitService, scope: string, count: number): Promise<number> {
  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, () => service.take(scope, 'test', { rate: 10, burst: 100 })),
  );
  for (const outcome of outcomes)
    if (outcome.status === 'rejected' && !isServiceError(outcome.reason)) throw outcome.reason;
  return outcomes.filter((o) => o.status === 'fulfilled').length;
}

describe('rate tokens leased per process', () => {
  it('three processes sharing one bucket admit exactly its burst while the clock stands still', async () => {
    // Three services over one database: three server processes' leases of one bucket.
    const processes = Array.from({ length: 3 }, () => new RateLimitService(core.services.db, clock, limitsWith()));
    let granted = 0;
    for (let round = 0; round < 12; round += 1)
      for (const service of processes) granted += await takeMany(service, 'team-a', 7);
    // More than any lease holds: every process spends what it still holds, and no more.
    for (const service of processes) granted += await takeMany(service, 'team-a', 20);
    expect(granted).toBe(100);
    const [bucket] = await core.services.db.query(
      `SELECT tokens FROM rate_limit_buckets WHERE team_id = 'team-a' AND bucket = 'test'`,
    );
    expect(Number(bucket.tokens)).toBeLessThan(1);
  });

  it('a process gives back what it did not spend once its lease is over', async () => {
    const spender = new RateLimitService(core.services.db, clock, limitsWith());
    const other = new RateLimitService(core.services.db, clock, limitsWith());
    // Steady demand makes the lease ask for more than it needs: a chunk of up to a tenth of the burst.
    for (let i = 0; i < 6; i += 1) await takeMany(spender, 'team-b', 4);
    const [held] = await core.services.db.query(
      `SELECT tokens FROM rate_limit_buckets WHERE team_id = 'team-b' AND bucket = 'test'`,
    );
    // 24 spent; what the bucket lacks beyond them is leased to the spender.
    const leased = 100 - 24 - Number(held.tokens);
    expect(leased).toBeGreaterThan(0);
    expect(leased).toBeLessThanOrEqual(10);
    // The lease ends; the spender's next chunk returns the rest (the bucket also refilled for the time passed).
    clock.advance(LEASE_MS);
    expect(await takeMany(spender, 'team-b', 1)).toBe(1);
    const [after] = await core.services.db.query(
      `SELECT tokens FROM rate_limit_buckets WHERE team_id = 'team-b' AND bucket = 'test'`,
    );
    expect(Number(after.tokens)).toBe(Math.min(100, 100 - 24 + (LEASE_MS / SECOND) * 10) - 1);
    // Meanwhile another process takes from the same bucket.
    expect(await takeMany(other, 'team-b', 3)).toBe(3);
  });

  it('refuses with 429 rate_limited and Retry-After once the bucket and the lease are empty', async () => {
    const service = new RateLimitService(core.services.db, clock, limitsWith());
    expect(await takeMany(service, 'team-c', 100)).toBe(100);
    await expect(service.take('team-c', 'test', { rate: 10, burst: 100 })).rejects.toMatchObject({
      code: 'rate_limited',
      details: { retryAfter: 1 },
    });
    clock.advance(SECOND);
    expect(await takeMany(service, 'team-c', 20)).toBe(10);
  });
});
