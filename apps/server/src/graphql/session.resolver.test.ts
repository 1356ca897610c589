import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR } from '@svc/core';
import { startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function gql(query: string, variables: Record<string, unknown> = {}, bearer: string | null = null) {
  const response = await fetch(`${h.rootUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (await response.json()) as any;
}

const CREATE = 'mutation($key: String!) { createConsoleSession(secretKey: $key) { token expiresAt } }';
const END = 'mutation { endConsoleSession }';
const VIEWER = '{ viewer { teamId teamName } }';

describe('console sessions over GraphQL', () => {
  it('a session token works for GraphQL until sign-out, then answers unauthorized', async () => {
    const created = await gql(CREATE, { key: h.team.key });
    const { token, expiresAt } = created.data.createConsoleSession;
    expect(token).toMatch(/^svc_cs_/);
    expect(new Date(expiresAt).getTime()).toBe(h.clock.now().getTime() + 12 * HOUR);
    expect((await gql(VIEWER, {}, token)).data.viewer.teamId).toBe(h.team.teamId);

    expect((await gql(END, {}, token)).data.endConsoleSession).toBe(true);
    expect((await gql(VIEWER, {}, token)).errors[0].extensions.code).toBe('unauthorized');
    // Ending it again is harmless; the secret key itself is untouched.
    expect((await gql(END, {}, token)).data.endConsoleSession).toBe(true);
    expect((await gql(VIEWER, {}, h.team.key)).data.viewer.teamId).toBe(h.team.teamId);
  });

  it('a wrong key gets no session; a suspended team gets account_suspended; REST refuses session tokens', async () => {
    const wrong = await gql(CREATE, { key: `svc_sk_${'w'.repeat(43)}` });
    expect(wrong.errors[0].extensions.code).toBe('unauthorized');
    expect(wrong.data).toBeNull();

    const team = await h.newTeam('session-suspended');
    const token = (await gql(CREATE, { key: team.key })).data.createConsoleSession.token as string;
    expect((await h.request('GET', '/tenants', { key: token })).status).toBe(401);
    await h.services.teams.setSuspension(team.teamId, { suspended: true, webhooksSuspended: false });
    expect((await gql(VIEWER, {}, token)).errors[0].extensions.code).toBe('account_suspended');
    expect((await gql(CREATE, { key: team.key })).errors[0].extensions.code).toBe('account_suspended');
    // Sign-out still works for a suspended team.
    expect((await gql(END, {}, token)).data.endConsoleSession).toBe(true);
    await h.services.teams.setSuspension(team.teamId, { suspended: false, webhooksSuspended: false });
    expect((await gql(VIEWER, {}, token)).errors[0].extensions.code).toBe('unauthorized');
  });

  it('ending a session needs a session token', async () => {
    expect((await gql(END, {}, h.team.key)).errors[0].extensions.code).toBe('unauthorized');
    expect((await gql(END)).errors[0].extensions.code).toBe('unauthorized');
  });

  it('sign-ins of one team are rate limited and an over-limit sign-in leaves no usable session', async () => {
    const team = await h.newTeam('session-rate');
    const codes: (string | undefined)[] = [];
    for (let i = 0; i < 21; i += 1) codes.push((await gql(CREATE, { key: team.key })).errors?.[0]?.extensions?.code);
    expect(codes.slice(0, 20).every((code) => code === undefined)).toBe(true);
    expect(codes[20]).toBe('rate_limited');
    const rows: { live: number }[] = await h.services.db.query(
      `SELECT count(*)::int AS live FROM console_sessions WHERE team_id = $1 AND revoked_at IS NULL`,
      [team.teamId],
    );
    expect(rows[0]!.live).toBe(20);
  });
});
