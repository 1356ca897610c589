import { describe, expect, it } from 'vitest';
import { HOUR, ManualClock, MINUTE } from '../common/clock.js';
import { useTestCore } from '../testing/test-core.js';

const clock = new ManualClock('2026-10-09T08:00:00Z');
const core = useTestCore(clock);

async function teamWithKey(name: string) {
  const team = await core.services.teams.createTeam(name);
  const key = await core.services.teams.createKey(team.id);
  return { teamId: team.id, ...key };
}

describe('console sessions', () => {
  it('trade a secret key for a token that acts as that key and is not the key', async () => {
    const { teamId, keyId, secret } = await teamWithKey('session-basic');
    const session = await core.services.consoleSessions.createSession(secret);
    expect(session.token).toMatch(/^svc_cs_[A-Za-z0-9_-]{43}$/);
    expect(session.token).not.toContain(secret);
    expect(session.expiresAt.toISOString()).toBe('2026-10-09T20:00:00.000Z');
    await expect(core.services.consoleSessions.authenticateConsole(`Bearer ${session.token}`)).resolves.toEqual({
      teamId,
      keyId,
      // The key's feature-flag environment restriction travels with the session (null: none).
      environmentIds: null,
    });
    // Only the hash is stored.
    const stored: { token_sha256: Buffer }[] = await core.services.db.query(
      'SELECT token_sha256 FROM console_sessions WHERE key_id = $1',
      [keyId],
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.token_sha256.toString('utf8')).not.toContain('svc_cs_');
  });

  it('refuse a key the API refuses: unknown, revoked, or of a suspended team', async () => {
    await expect(core.services.consoleSessions.createSession(`svc_sk_${'x'.repeat(43)}`)).rejects.toMatchObject({
      code: 'unauthorized',
    });
    await expect(core.services.consoleSessions.createSession('not a key')).rejects.toMatchObject({
      code: 'unauthorized',
    });
    const revoked = await teamWithKey('session-revoked-key');
    await core.services.teams.revokeKey(revoked.keyId);
    await expect(core.services.consoleSessions.createSession(revoked.secret)).rejects.toMatchObject({
      code: 'unauthorized',
    });
    const suspended = await teamWithKey('session-suspended-team');
    await core.services.teams.setSuspension(suspended.teamId, { suspended: true, webhooksSuspended: false });
    await expect(core.services.consoleSessions.createSession(suspended.secret)).rejects.toMatchObject({
      code: 'account_suspended',
    });
  });

  it('end 12 hours after sign-in, however busy', async () => {
    const { secret } = await teamWithKey('session-expiry');
    const session = await core.services.consoleSessions.createSession(secret);
    const start = clock.now();
    for (let step = 0; step < 11; step++) {
      clock.advance(HOUR);
      await expect(core.services.consoleSessions.authenticateSession(session.token)).resolves.toBeDefined();
    }
    clock.advance(HOUR - 1);
    await expect(core.services.consoleSessions.authenticateSession(session.token)).resolves.toBeDefined();
    clock.advance(1);
    await expect(core.services.consoleSessions.authenticateSession(session.token)).rejects.toMatchObject({
      code: 'unauthorized',
    });
    clock.set(start);
  });

  it('end at sign-out: the revoked token is refused, other sessions of the key go on, revoking twice is fine', async () => {
    const { secret } = await teamWithKey('session-revoke');
    const first = await core.services.consoleSessions.createSession(secret);
    const second = await core.services.consoleSessions.createSession(secret);
    await core.services.consoleSessions.revokeSession(first.token);
    await expect(core.services.consoleSessions.authenticateConsole(`Bearer ${first.token}`)).rejects.toMatchObject({
      code: 'unauthorized',
    });
    await expect(core.services.consoleSessions.authenticateSession(second.token)).resolves.toBeDefined();
    await core.services.consoleSessions.revokeSession(first.token);
    await core.services.consoleSessions.revokeSession(`svc_cs_${'u'.repeat(43)}`);
  });

  it('end when their key is revoked, and answer account_suspended while the team is suspended', async () => {
    const { teamId, keyId, secret } = await teamWithKey('session-key-team');
    const session = await core.services.consoleSessions.createSession(secret);
    await core.services.teams.setSuspension(teamId, { suspended: true, webhooksSuspended: false });
    await expect(core.services.consoleSessions.authenticateSession(session.token)).rejects.toMatchObject({
      code: 'account_suspended',
    });
    await core.services.teams.setSuspension(teamId, { suspended: false, webhooksSuspended: false });
    await expect(core.services.consoleSessions.authenticateSession(session.token)).resolves.toBeDefined();
    await core.services.teams.revokeKey(keyId);
    await expect(core.services.consoleSessions.authenticateSession(session.token)).rejects.toMatchObject({
      code: 'unauthorized',
    });
  });

  it('record when a session was last used, at most once a minute', async () => {
    const { keyId, secret } = await teamWithKey('session-last-seen');
    const session = await core.services.consoleSessions.createSession(secret);
    const lastSeen = async () =>
      (
        (await core.services.db.query('SELECT last_seen_at FROM console_sessions WHERE key_id = $1', [keyId])) as {
          last_seen_at: Date;
        }[]
      )[0]!.last_seen_at.toISOString();
    const created = await lastSeen();
    clock.advance(30_000);
    await core.services.consoleSessions.authenticateSession(session.token);
    expect(await lastSeen()).toBe(created);
    clock.advance(MINUTE);
    await core.services.consoleSessions.authenticateSession(session.token);
    expect(await lastSeen()).toBe(clock.now().toISOString());
  });

  it('leave secret keys to the key check and refuse malformed tokens', async () => {
    const { teamId, secret } = await teamWithKey('session-keys');
    await expect(core.services.consoleSessions.authenticateConsole(`Bearer ${secret}`)).resolves.toMatchObject({
      teamId,
    });
    await expect(core.services.consoleSessions.authenticateConsole('Bearer svc_cs_short')).rejects.toMatchObject({
      code: 'unauthorized',
    });
    await expect(core.services.consoleSessions.authenticateConsole(undefined)).rejects.toMatchObject({
      code: 'unauthorized',
    });
  });
});
