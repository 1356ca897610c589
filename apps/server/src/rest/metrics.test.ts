import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let tenantId: string;
const RECEIVER = 'https://receiver.example.com/hooks/metrics-secret-path';
const PAYLOAD_MARKER = 'payload-marker-3f9a';

beforeAll(async () => {
  h = await startHarness();
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'metrics', name: 'Metrics' })).json.id;
  expect((await post(h, '/event_types', { name: 'invoice.paid' })).status).toBe(201);
  expect((await post(h, '/endpoints', { tenant_id: tenantId, url: RECEIVER })).status).toBe(201);
});
afterAll(async () => {
  await h.close();
});

interface Scrape {
  status: number;
  contentType: string | null;
  text: string;
  /** Unlabelled samples by metric name. */
  samples: Map<string, number>;
  /** Every sample by its series as written (`name{label="value"}`). */
  series: Map<string, number>;
}

/** GET /metrics with no credentials, parsed as the Prometheus text format. */
async function scrape(): Promise<Scrape> {
  const response = await fetch(`${h.rootUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  const samples = new Map<string, number>();
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    expect(sample, `a sample line: ${line}`).not.toBeNull();
    if (sample && !sample[2]) samples.set(sample[1]!, Number(sample[3]));
    if (sample) series.set(`${sample[1]}${sample[2] ?? ''}`, Number(sample[3]));
  }
  return { status: response.status, contentType: response.headers.get('content-type'), text, samples, series };
}

async function publish(): Promise<void> {
  const r = await post(h, '/messages', {
    tenant_id: tenantId,
    event_type: 'invoice.paid',
    payload: { marker: PAYLOAD_MARKER },
  });
  expect(r.status, r.text).toBe(202);
}

describe('GET /metrics', () => {
  it('serves Prometheus text without a key, with the queue gauges described and typed', async () => {
    const first = await scrape();
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of ['svc_pending_deliveries', 'svc_oldest_due_age_seconds']) {
      expect(first.text).toContain(`# HELP ${name} `);
      expect(first.text).toContain(`# TYPE ${name} gauge`);
    }
    expect(first.samples.get('svc_pending_deliveries')).toBe(0);
    expect(first.samples.get('svc_oldest_due_age_seconds')).toBe(0);
    expect(first.text).toContain('# TYPE svc_delivery_attempts_total counter');
  });

  it('counts pending deliveries and the age of the oldest due one, read at most once a second', async () => {
    h.clock.advance(2 * SECOND);
    await publish();
    await publish();
    h.clock.advance(2 * SECOND);
    const now = await scrape();
    expect(now.samples.get('svc_pending_deliveries')).toBe(2);
    expect(now.samples.get('svc_oldest_due_age_seconds')).toBe(2);

    // Scrapes within a second share one reading.
    await publish();
    expect((await scrape()).samples.get('svc_pending_deliveries')).toBe(2);

    h.clock.advance(90 * SECOND);
    const later = await scrape();
    expect(later.samples.get('svc_pending_deliveries')).toBe(3);
    expect(later.samples.get('svc_oldest_due_age_seconds')).toBe(92);

    // A delivery that is not yet due (a retry later: its record and its queue row) does not age the queue.
    await h.services.db.query(
      `WITH queue AS (UPDATE delivery_queue SET due_at = $1::timestamptz + interval '1 hour')
       UPDATE deliveries SET status = 'retry_wait', next_attempt_at = $1::timestamptz + interval '1 hour'`,
      [h.clock.now()],
    );
    h.clock.advance(SECOND);
    expect((await scrape()).samples.get('svc_oldest_due_age_seconds')).toBe(0);
  });

  it('counts enabled endpoints by open and half-open circuit, read from Postgres at the scrape', async () => {
    const before = await scrape();
    expect(before.text).toContain('# TYPE svc_endpoint_circuits gauge');
    expect(before.series.get('svc_endpoint_circuits{state="open"}')).toBe(0);
    expect(before.series.get('svc_endpoint_circuits{state="half_open"}')).toBe(0);
    const second = (await post(h, '/endpoints', { tenant_id: tenantId, url: `${RECEIVER}/2` })).json.id as string;
    const third = (await post(h, '/endpoints', { tenant_id: tenantId, url: `${RECEIVER}/3` })).json.id as string;
    await h.services.db.query(`UPDATE endpoint_health SET circuit = 'open' WHERE endpoint_id = ANY($1)`, [
      [second, third],
    ]);
    // A paused endpoint's circuit is nobody's problem until it is enabled again.
    await h.services.db.query(`UPDATE endpoints SET status = 'paused' WHERE id = $1`, [third]);
    h.clock.advance(2 * SECOND);
    const open = await scrape();
    expect(open.series.get('svc_endpoint_circuits{state="open"}')).toBe(1);
    expect(open.series.get('svc_endpoint_circuits{state="half_open"}')).toBe(0);
    await h.services.db.query(`UPDATE endpoint_health SET circuit = 'half_open' WHERE endpoint_id = $1`, [second]);
    h.clock.advance(2 * SECOND);
    const halfOpen = await scrape();
    expect(halfOpen.series.get('svc_endpoint_circuits{state="open"}')).toBe(0);
    expect(halfOpen.series.get('svc_endpoint_circuits{state="half_open"}')).toBe(1);
  });

  it('counts admission refusals by the error code answered: rules, the admission bucket', async () => {
    const refusals = async (reason: string) =>
      (await scrape()).series.get(`svc_admission_refusals_total{reason="${reason}"}`) ?? 0;
    expect((await scrape()).text).toContain('# TYPE svc_admission_refusals_total counter');
    const billingBefore = await refusals('billing_required');
    await h.services.teams.setPaymentCard(h.team.teamId, false);
    const refused = await post(h, '/messages', { tenant_id: tenantId, event_type: 'invoice.paid', payload: {} });
    expect(refused.status).toBe(402);
    expect(await refusals('billing_required')).toBe(billingBefore + 1);
    await h.services.teams.setPaymentCard(h.team.teamId, true);

    const invalidBefore = await refusals('invalid_event_type');
    const unknownType = await post(h, '/messages', { tenant_id: tenantId, event_type: 'nope.never', payload: {} });
    expect(unknownType.status).toBe(422);
    expect(await refusals('invalid_event_type')).toBe(invalidBefore + 1);

    // An empty admission bucket (the manual clock adds no token): refused before the rules, as rate_limited.
    const limitedBefore = await refusals('rate_limited');
    await h.services.db.query(`UPDATE rate_limit_buckets SET tokens = 0 WHERE team_id = $1`, [h.team.teamId]);
    h.services.rateLimits.forgetLeases();
    const limited = await post(h, '/messages', { tenant_id: tenantId, event_type: 'invoice.paid', payload: {} });
    expect(limited.status).toBe(429);
    expect(await refusals('rate_limited')).toBe(limitedBefore + 1);
  });

  it('never shows a URL, a key, a payload or a resource ID', async () => {
    const { text } = await scrape();
    for (const secret of [RECEIVER, 'receiver.example.com', h.team.key, h.team.keyId, PAYLOAD_MARKER, tenantId])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/https?:\/\//);
    expect(text).not.toMatch(/\b(wd[a-z]|svc_sk|whsec|team)_[0-9a-z]{8,}/);
  });
});
