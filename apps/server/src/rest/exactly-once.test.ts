import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockTeam, MINUTE, TenantEntity } from '@svc/core';
import { startHarness, uniqueKey, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** Holds the team's quota lock in a transaction of its own until `release` is called. */
async function holdTeamQuotaLock(teamId: string): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const done = h.services.db.transaction(async (tx) => {
    await lockTeam(tx, teamId);
    locked();
    await released;
  });
  await isLocked;
  return {
    async release() {
      release();
      await done;
    },
  };
}

describe('exactly once under slow requests', () => {
  it('a first request held far past any lease and its retry: exactly one executes', async () => {
    const team = await h.newTeam('slow');
    const key = uniqueKey();
    const body = { external_id: 'slow-1', name: 'Slow' };
    const hold = await holdTeamQuotaLock(team.teamId);
    const first = h.request('POST', '/tenants', { key: team.key, idempotencyKey: key, body });
    // Let the first request reach the held lock, then move time well past the old 60-second claim lease.
    await new Promise((resolve) => setTimeout(resolve, 300));
    h.clock.advance(5 * MINUTE);
    const retry = await h.request('POST', '/tenants', { key: team.key, idempotencyKey: key, body });
    expect(retry.status).toBe(409);
    expect(retry.json.error.code).toBe('request_in_progress');
    expect(retry.headers.get('retry-after')).toBe('1');
    await hold.release();
    const firstResponse = await first;
    expect(firstResponse.status).toBe(201);
    const replay = await h.request('POST', '/tenants', { key: team.key, idempotencyKey: key, body });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.json.id).toBe(firstResponse.json.id);
    const tenants = await h.services.db.getRepository(TenantEntity).countBy({ teamId: team.teamId });
    expect(tenants).toBe(1);
  });

  it('a failing request leaves the key unused and cannot touch a later holder of the same key', async () => {
    const team = await h.newTeam('fail');
    const key = uniqueKey();
    // Fails inside the work (an inactive tenant is refused) after validation passed.
    const refused = await h.request('POST', '/endpoints', {
      key: team.key,
      idempotencyKey: key,
      body: { tenant_id: 'wdt_missing', url: 'https://example.com/hook' },
    });
    expect(refused.status).toBe(422);
    const created = await h.request('POST', '/tenants', {
      key: team.key,
      idempotencyKey: key,
      body: { external_id: 'after-failure', name: 'After' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotency-replayed')).toBeNull();
  });

  it('concurrent twins: one executes, the others are told the request is in progress or get its replay', async () => {
    const team = await h.newTeam('twins');
    const key = uniqueKey();
    const body = { external_id: 'twin', name: 'Twin' };
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => h.request('POST', '/tenants', { key: team.key, idempotencyKey: key, body })),
    );
    const executed = responses.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') === null);
    expect(executed).toHaveLength(1);
    for (const r of responses)
      if (r.status !== 201) expect(r.json.error.code).toBe('request_in_progress');
      else expect(r.json.id).toBe(executed[0]!.json.id);
    expect(await h.services.db.getRepository(TenantEntity).countBy({ teamId: team.teamId })).toBe(1);
  });
});
