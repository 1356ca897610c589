import { describe, expect, it } from 'vitest';
import { DAY, HOUR, ManualClock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { RawJson } from '../common/raw-json.js';
import { parseInput } from '../common/validation.js';
import { CreateEndpointInput } from '../endpoints/endpoint.inputs.js';
import { CreateEventTypeInput } from '../event-types/event-type.inputs.js';
import { CreateMessageInput } from '../messages/message.inputs.js';
import { CreateTenantInput } from '../tenants/tenant.inputs.js';
import { EngineSteps } from '../testing/engine-steps.js';
import { useTestCore } from '../testing/test-core.js';
import { CreatePortalSessionInput } from './portal-session.inputs.js';
import { PortalEndpointInput, PortalEndpointUpdate } from './portal.inputs.js';

const clock = new ManualClock('2026-11-02T10:00:00Z');
const core = useTestCore(clock);

/**
 * The tenant's events in the order written (read from the table: GET /events lists only what transactions older than
 * every running one wrote, and other test files share the Postgres cluster).
 */
async function eventsOf(tenantId: string, type?: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  return core.services.db.query(
    `SELECT type, data FROM operational_events WHERE tenant_id = $1 AND ($2::text IS NULL OR type = $2) ORDER BY id`,
    [tenantId, type ?? null],
  );
}

async function operator(name: string) {
  const s = core.services;
  const team = await s.teams.createTeam(name);
  const key = await s.teams.createKey(team.id);
  await s.teams.setPaymentCard(team.id, true);
  const ctx: CallContext = { actor: { teamId: team.id, keyId: key.keyId } };
  const tenant = await s.tenants.createTenant(
    ctx,
    parseInput(CreateTenantInput, { external_id: 'acme', name: 'Acme' }),
  );
  const other = await s.tenants.createTenant(ctx, parseInput(CreateTenantInput, { external_id: 'zed', name: 'Zed' }));
  for (const eventType of ['invoice.paid', 'invoice.failed', 'user.created'])
    await s.eventTypes.createEventType(
      ctx,
      parseInput(CreateEventTypeInput, { name: eventType, example: new RawJson('{"id":"in_1"}') }),
    );
  return { team, key, ctx, tenant, other };
}

async function openPortal(ctx: CallContext, tenantId: string, input: Record<string, unknown> = {}) {
  const s = core.services;
  const issued = await s.portalSessions.createSession(ctx, tenantId, parseInput(CreatePortalSessionInput, input));
  const opened = await s.portalSessions.openSession(issued.linkToken);
  const actor = await s.portalSessions.authenticate(opened.token);
  return { issued, opened, portal: { actor } satisfies CallContext };
}

describe('portal sessions', () => {
  it('last an hour by default, seven days at most; the link opens once; only hashes are stored', async () => {
    const s = core.services;
    const { ctx, tenant } = await operator('portal-basics');
    const { issued, opened, portal } = await openPortal(ctx, tenant.id);
    expect(issued.session.expiresAt.toISOString()).toBe('2026-11-02T11:00:00.000Z');
    expect(issued.session).toMatchObject({ capabilities: 'read_only', eventTypes: null, status: 'active' });
    expect(portal.actor.portal).toEqual({
      sessionId: issued.session.id,
      tenantId: tenant.id,
      capabilities: 'read_only',
      eventTypes: null,
    });
    await expect(s.portalSessions.openSession(issued.linkToken)).rejects.toMatchObject({ code: 'unauthorized' });
    const stored: { link: Buffer; session: Buffer }[] = await s.db.query(
      'SELECT link_token_sha256 AS link, session_token_sha256 AS session FROM portal_sessions WHERE id = $1',
      [issued.session.id],
    );
    expect(stored[0]!.link.toString('latin1')).not.toContain('svc_pl_');
    expect(stored[0]!.session.toString('latin1')).not.toContain('svc_ps_');
    expect(() => parseInput(CreatePortalSessionInput, { expires_in_seconds: 7 * 86_400 + 1 })).toThrow(/7 days/);
    const week = await s.portalSessions.createSession(
      ctx,
      tenant.id,
      parseInput(CreatePortalSessionInput, { expires_in_seconds: 7 * 86_400 }),
    );
    expect(week.session.expiresAt.getTime() - clock.now().getTime()).toBe(7 * DAY);
    clock.advance(HOUR);
    await expect(s.portalSessions.authenticate(opened.token)).rejects.toMatchObject({ code: 'unauthorized' });
    const listed = await s.portalSessions.listSessions(ctx, tenant.id, {});
    expect(listed.data.map((session) => session.status)).toEqual(['expired', 'active']);
    // An unopened link of an expired session does not open.
    const late = await s.portalSessions.createSession(
      ctx,
      tenant.id,
      parseInput(CreatePortalSessionInput, { expires_in_seconds: 60 }),
    );
    clock.advance(60_000);
    await expect(s.portalSessions.openSession(late.linkToken)).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('refuse bad branding and unknown event types', async () => {
    const s = core.services;
    const { ctx, tenant } = await operator('portal-input');
    expect(() =>
      parseInput(CreatePortalSessionInput, { branding: { logo_url: 'http://cdn.example.com/a.png' } }),
    ).toThrow(/https/);
    expect(() => parseInput(CreatePortalSessionInput, { branding: { accent_color: 'red' } })).toThrow(/colour/);
    const branded = parseInput(CreatePortalSessionInput, {
      branding: { display_name: 'Acme Pay', accent_color: '#1C7ED6', logo_url: 'https://cdn.example.com/a.png' },
    });
    const issued = await s.portalSessions.createSession(ctx, tenant.id, branded);
    expect(issued.session.branding).toEqual({
      displayName: 'Acme Pay',
      accentColor: '#1c7ed6',
      logoUrl: 'https://cdn.example.com/a.png',
    });
    await expect(
      s.portalSessions.createSession(
        ctx,
        tenant.id,
        parseInput(CreatePortalSessionInput, { event_types: ['invoice.paid', 'no.such'] }),
      ),
    ).rejects.toMatchObject({ code: 'invalid_event_type', details: { field: 'event_types' } });
  });

  it('end when revoked, when the tenant is deleted, while the team is suspended and when the key is revoked', async () => {
    const s = core.services;
    const { team, key, ctx, tenant, other } = await operator('portal-ending');
    const revoked = await openPortal(ctx, tenant.id);
    await s.portalSessions.revokeSession(ctx, tenant.id, revoked.issued.session.id);
    await expect(s.portalSessions.authenticate(revoked.opened.token)).rejects.toMatchObject({ code: 'unauthorized' });
    // Another tenant's session ID answers not found.
    await expect(s.portalSessions.revokeSession(ctx, other.id, revoked.issued.session.id)).rejects.toMatchObject({
      code: 'not_found',
    });

    const suspended = await openPortal(ctx, tenant.id);
    await s.teams.setSuspension(team.id, { suspended: true, webhooksSuspended: false });
    await expect(s.portalSessions.authenticate(suspended.opened.token)).rejects.toMatchObject({
      code: 'account_suspended',
    });
    await s.teams.setSuspension(team.id, { suspended: false, webhooksSuspended: false });
    await expect(s.portalSessions.authenticate(suspended.opened.token)).resolves.toBeDefined();

    const deleted = await openPortal(ctx, other.id);
    const current = await s.tenants.getTenant(ctx, other.id);
    await s.tenants.deleteTenant(ctx, other.id, current.etag);
    await expect(s.portalSessions.authenticate(deleted.opened.token)).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await s.portalSessions.getSession(ctx, other.id, deleted.issued.session.id)).status).toBe('ended');

    await s.teams.revokeKey(key.keyId);
    await expect(s.portalSessions.authenticate(suspended.opened.token)).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('reach only their tenant, refuse changes when read only, and keep to their event types', async () => {
    const s = core.services;
    const { ctx, tenant, other } = await operator('portal-scope');
    const foreign = await s.endpoints.createEndpoint(
      ctx,
      parseInput(CreateEndpointInput, { tenant_id: other.id, url: 'https://zed.example.com/hook' }),
    );
    const reader = await openPortal(ctx, tenant.id);
    await expect(s.portal.getEndpoint(reader.portal, foreign.endpoint.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      s.portal.createEndpoint(reader.portal, parseInput(PortalEndpointInput, { url: 'https://acme.example.com/a' })),
    ).rejects.toMatchObject({ code: 'portal_access_denied' });

    const manager = await openPortal(ctx, tenant.id, {
      capabilities: 'manage_endpoints',
      event_types: ['invoice.paid', 'invoice.failed'],
    });
    expect((await s.portal.listEventTypes(manager.portal, {})).data.map((eventType) => eventType.name)).toEqual([
      'invoice.failed',
      'invoice.paid',
    ]);
    expect(await s.portal.eventTypeNames(manager.portal)).toEqual(['invoice.failed', 'invoice.paid']);
    await expect(
      s.portal.createEndpoint(
        manager.portal,
        parseInput(PortalEndpointInput, { url: 'https://acme.example.com/a', events: ['invoice.*'] }),
      ),
    ).rejects.toMatchObject({ code: 'invalid_field', details: { field: 'events' } });
    const created = await s.portal.createEndpoint(
      manager.portal,
      parseInput(PortalEndpointInput, { url: 'https://acme.example.com/a' }),
    );
    expect(created.endpoint).toMatchObject({ tenantId: tenant.id, events: ['invoice.paid', 'invoice.failed'] });
    expect(created.signingSecret).toMatch(/^whsec_/);
    const paused = await s.portal.updateEndpoint(
      manager.portal,
      created.endpoint.id,
      created.endpoint.etag,
      parseInput(PortalEndpointUpdate, { status: 'paused' }),
    );
    expect(paused.status).toBe('paused');
    const revealed = await s.portal.revealSecret(reader.portal, created.endpoint.id);
    expect(revealed.secret).toBe(created.signingSecret);
    const page = await s.portal.listEndpoints(manager.portal, {});
    expect(page.data.map((endpoint) => endpoint.id)).toEqual([created.endpoint.id]);

    const events = { data: await eventsOf(tenant.id) };
    expect(events.data.map((event) => [event.type, event.data['session_id']])).toEqual([
      ['webhooks.portal.session.opened', reader.issued.session.id],
      ['webhooks.portal.session.opened', manager.issued.session.id],
      ['webhooks.portal.endpoint.created', manager.issued.session.id],
      ['webhooks.portal.endpoint.updated', manager.issued.session.id],
      ['webhooks.portal.endpoint.secret_revealed', reader.issued.session.id],
    ]);
    expect(events.data[3]!.data['changes']).toBe('status');
  });

  it('replay dead letters only within the spending cap, charged to the key that created the session', async () => {
    const s = core.services;
    const { ctx, tenant } = await operator('portal-cap');
    const { portal, issued } = await openPortal(ctx, tenant.id, {
      capabilities: 'manage_endpoints',
      spending_cap_usd: '0.0002',
    });
    const endpoint = await s.portal.createEndpoint(
      portal,
      parseInput(PortalEndpointInput, { url: 'https://acme.example.com/cap' }),
    );
    const message = await s.messages.admitMessage(
      ctx,
      parseInput(CreateMessageInput, {
        tenant_id: tenant.id,
        event_type: 'invoice.paid',
        payload: new RawJson('{"a":1}'),
      }),
      { origin: 'api' },
    );
    const steps = new EngineSteps(s);
    const [delivery] = (await s.db.query('SELECT id FROM deliveries WHERE message_id = $1', [message.id])) as {
      id: string;
    }[];
    const [attempt] = await steps.claim([delivery!.id]);
    await steps.settle([
      {
        attempt: attempt!,
        result: { kind: 'response', status: 410, retryAfterSeconds: null },
        durationMs: 3,
        responseBody: null,
        jitter: 0,
      },
    ]);
    expect((await s.portal.getDelivery(portal, delivery!.id)).status).toBe('failed');
    // The 410 disabled the endpoint; the tenant resumes it from the portal.
    const disabled = await s.portal.getEndpoint(portal, endpoint.endpoint.id);
    expect(disabled.status).toBe('disabled');
    await s.portal.resumeEndpoint(portal, disabled.id, disabled.etag);
    const quote = await s.deliveries.quoteReplays(ctx, [delivery!.id], { configuration: 'frozen' });
    const price = quote.items[0]!.total_usd;
    const first = await s.portal.replay(portal, delivery!.id);
    expect(first).toMatchObject({ kind: 'replay', replay_of: delivery!.id, endpoint_id: endpoint.endpoint.id });
    const session = await s.portalSessions.getSession(ctx, tenant.id, issued.session.id);
    expect(session.spentMicros.toString()).toBe(String(Number(price) * 1_000_000));
    // The cap allows as many replays as it pays for, then refuses with 402 spending_limit.
    const cap = 200n;
    const allowed = Number(cap / session.spentMicros);
    for (let i = 1; i < allowed; i += 1) await s.portal.replay(portal, delivery!.id);
    await expect(s.portal.replay(portal, delivery!.id)).rejects.toMatchObject({ code: 'spending_limit' });
    // From the table: the feed hides events behind transactions of other test files that are still open.
    const replayed = await eventsOf(tenant.id, 'webhooks.portal.delivery.replayed');
    expect(replayed).toHaveLength(allowed);
    expect(replayed[0]!.data).toMatchObject({ session_id: issued.session.id, charged_usd: price });
  });
});
