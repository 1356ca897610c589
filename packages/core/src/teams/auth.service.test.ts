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
});
