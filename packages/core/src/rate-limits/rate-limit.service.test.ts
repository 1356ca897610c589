import { describe, expect, it } from 'vitest';
import { ManualClock, SECOND, systemClock, type Clock } from '../common/clock.js';
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

/** The service over the test database, counting the statements it sends. */
function counting(clock: Clock) {
  const db = core.services.db;
  let statements = 0;
  const counted = new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'query')
        return (...args: Parameters<typeof db.query>) => {
          statements += 1;
          return target.query(...args);
        };
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return {
    service: new RateLimitService(counted, clock, limitsWith()),
    get statements() {
      return statements;
    },
  };
}

async function throttled(teamId: string): Promise<number> {
  const [row] = await core.services.db.query(
    `SELECT coalesce(sum(throttled), 0)::int AS n FROM analytics_facts WHERE team_id = $1`,
    [teamId],
  );
  return Number(row.n);
}

async function outcome(promise: Promise<void>): Promise<'granted' | 'refused'> {
  try {
    await promise;
    return 'granted';
  } catch (error) {
    if (isServiceError(error) && error.code === 'rate_limited') return 'refused';
    throw error;
  }
}

describe('an empty bucket', () => {
  const spec = { rate: 10, burst: 100 };

  it('refuses without a statement until a whole token can have refilled, and still counts every refusal', async () => {
    const probe = counting(clock);
    const { service } = probe;
    const scope = { teamId: 'team-e', tenantId: null, sourceId: null };
    const take = () => outcome(service.take('team-e', 'test', spec, scope));
    for (let i = 0; i < 100; i += 1) expect(await take()).toBe('granted');
    expect(await take()).toBe('refused'); // this one asks the bucket
    const before = probe.statements;
    // A client hammering its 429s: none of these reaches Postgres.
    for (let i = 0; i < 30; i += 1) expect(await take()).toBe('refused');
    expect(probe.statements).toBe(before);
    // At 10 tokens a second the next whole token is there 100 ms later.
    clock.advance(99);
    expect(await take()).toBe('refused');
    expect(probe.statements).toBe(before);
    clock.advance(1);
    expect(await take()).toBe('granted');
    expect(probe.statements).toBe(before + 1);
    // Every refusal is counted as throttled: the one that asked the bucket and the 31 refused here.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await throttled('team-e')).toBe(32);
  });

  it('on the real clock: grants the bucket rate, asks Postgres about once per token, counts every refusal', async () => {
    // Slow enough that an empty bucket's window (up to 200 ms) outlasts a statement on a loaded machine.
    const rate = 5;
    const probe = counting(systemClock);
    const { service } = probe;
    const scope = { teamId: 'team-f', tenantId: null, sourceId: null };
    const take = () => outcome(service.take('team-f', 'test', { rate, burst: 5 }, scope));
    const TAKES = 200;
    const started = Date.now();
    let granted = 0;
    for (let i = 0; i < TAKES; i += 1) {
      if ((await take()) === 'granted') granted += 1;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const seconds = (Date.now() - started) / 1000;
    const refused = TAKES - granted;
    // The bucket's rate, on however much time the takes took (a loaded machine stretches it): never more than the
    // burst and what refilled, and not much less (a token waits at most until the next take).
    expect(granted).toBeLessThanOrEqual(5 + Math.ceil(rate * seconds) + 1);
    expect(granted).toBeGreaterThanOrEqual(5 + Math.floor(rate * seconds * 0.5));
    expect(refused).toBeGreaterThan(TAKES / 2);
    // Without the empty-bucket window each of the refusals was a statement.
    expect(probe.statements).toBeLessThan(granted + 10);
    // Refusals made without a statement are counted with the next one, or by the flush once a token can exist.
    const deadline = Date.now() + 5_000;
    while ((await throttled('team-f')) !== refused && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await throttled('team-f')).toBe(refused);
  });
});
