import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { ManualClock } from '../common/clock.js';
import { openCore, type OpenedCore } from '../boot.js';
import { testCoreOptions } from '../testing/core-options.js';
import { AUTH_CACHE_MS } from './auth.service.js';

// Two cores over one database stand for two server processes, each with its own auth cache.
let first: OpenedCore;
let second: OpenedCore;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  const clock = new ManualClock('2026-11-02T10:00:00Z');
  first = await openCore(testCoreOptions(database.url, clock));
  second = await openCore(testCoreOptions(database.url, clock));
});
afterAll(async () => {
  await first.close();
  await second.close();
  await drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('authentication cache', () => {
  it('a revoked key is refused at once in the revoking process and within a second in every other', async () => {
    const team = await first.services.teams.createTeam('cache');
    const key = await first.services.teams.createKey(team.id);
    const header = `Bearer ${key.secret}`;
    await expect(first.services.auth.authenticate(header)).resolves.toMatchObject({ keyId: key.keyId });
    await expect(second.services.auth.authenticate(header)).resolves.toMatchObject({ keyId: key.keyId });
    await first.services.teams.revokeKey(key.keyId);
    await expect(first.services.auth.authenticate(header)).rejects.toMatchObject({ code: 'unauthorized' });
    await sleep(AUTH_CACHE_MS + 50);
    await expect(second.services.auth.authenticate(header)).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('a suspension reaches every process within a second, and so does lifting it', async () => {
    const team = await first.services.teams.createTeam('suspend');
    const key = await first.services.teams.createKey(team.id);
    const header = `Bearer ${key.secret}`;
    await second.services.auth.authenticate(header);
    await first.services.teams.setSuspension(team.id, { suspended: true, webhooksSuspended: false });
    await expect(first.services.auth.authenticate(header)).rejects.toMatchObject({ code: 'account_suspended' });
    await sleep(AUTH_CACHE_MS + 50);
    await expect(second.services.auth.authenticate(header)).rejects.toMatchObject({ code: 'account_suspended' });
    await first.services.teams.setSuspension(team.id, { suspended: false, webhooksSuspended: false });
    await sleep(AUTH_CACHE_MS + 50);
    await expect(second.services.auth.authenticate(header)).resolves.toMatchObject({ teamId: team.id });
  });

  it('a key in steady use never waits for a lookup after its first, and a revocation still reaches it within a second', async () => {
    const team = await first.services.teams.createTeam('steady');
    const key = await first.services.teams.createKey(team.id);
    const header = `Bearer ${key.secret}`;
    await second.services.auth.authenticate(header);
    // Whether the call was answered before any I/O could complete: from the cache, not after a round trip.
    const fromCache = async () =>
      Promise.race([
        second.services.auth.authenticate(header).then(
          () => 'cache',
          (error: { code?: string }) => `refused ${error.code}`,
        ),
        new Promise<string>((resolve) => setImmediate(() => resolve('waited'))),
      ]);
    const answers: string[] = [];
    for (const until = performance.now() + 2.5 * AUTH_CACHE_MS; performance.now() < until;) {
      answers.push(await fromCache());
      await sleep(50);
    }
    expect(answers.length).toBeGreaterThan(20);
    expect(answers.filter((a) => a !== 'cache')).toEqual([]);

    // Revoked in the other process while this one keeps using it: refused within AUTH_CACHE_MS of the revocation.
    await first.services.teams.revokeKey(key.keyId);
    const revokedAt = performance.now();
    let refusedAt: number | null = null;
    while (refusedAt === null && performance.now() - revokedAt < 3 * AUTH_CACHE_MS) {
      try {
        await second.services.auth.authenticate(header);
      } catch (error) {
        expect(error).toMatchObject({ code: 'unauthorized' });
        refusedAt = performance.now();
      }
      await sleep(20);
    }
    expect(refusedAt).not.toBeNull();
    expect(refusedAt! - revokedAt).toBeLessThanOrEqual(AUTH_CACHE_MS + 100);
  });
});
