import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRoundTrips } from '@svc/db';
import { PER_REQUEST_STATEMENTS, post, startHarness, type Harness, type TestTeam } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const RECEIVER = 'https://receiver.example.com/hooks';

interface Setup {
  team: TestTeam;
  tenantId: string;
}

async function setup(name: string): Promise<Setup> {
  const team = await h.newTeam(name);
  const tenant = await post(h, '/tenants', { external_id: `t-${name}`, name: 'Tenant' }, { key: team.key });
  expect(tenant.status).toBe(201);
  return { team, tenantId: tenant.json.id as string };
}

async function createEndpoint(s: Setup, body: Record<string, unknown> = {}): Promise<{ id: string; etag: string }> {
  const created = await post(h, '/endpoints', { tenant_id: s.tenantId, url: RECEIVER, ...body }, { key: s.team.key });
  expect(created.status, created.text).toBe(201);
  return { id: created.json.id as string, etag: created.headers.get('etag')! };
}

/** What the delivery engine records after failed attempts (the engine writes endpoint_health with plain SQL). */
async function recordFailures(endpointId: string, failures: number, circuit: 'closed' | 'open' = 'open') {
  await h.services.db.query(
    `UPDATE endpoint_health
        SET circuit = $2, consecutive_failures = $3, last_success_at = '2026-11-01T09:00:00Z',
            last_failure_at = '2026-11-02T09:59:00Z', next_probe_at = '2026-11-02T10:04:00Z', probe_wait_seconds = 240
      WHERE endpoint_id = $1`,
    [endpointId, circuit, failures],
  );
}

async function pendingDeliveries(endpointId: string): Promise<number> {
  const rows: { n: number }[] = await h.services.db.query(
    `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status IN ('queued', 'in_flight', 'retry_wait')`,
    [endpointId],
  );
  return rows[0]!.n;
}

describe('endpoint health and queued_count', () => {
  it('a new endpoint reads healthy with nothing queued; its health shows what the engine recorded', async () => {
    const s = await setup('fresh');
    const { id } = await createEndpoint(s);
    const fresh = await h.request('GET', `/endpoints/${id}`, { key: s.team.key });
    expect(fresh.json).toMatchObject({
      health: {
        circuit: 'closed',
        consecutive_failures: 0,
        last_success_at: null,
        last_failure_at: null,
        next_probe_at: null,
      },
      queued_count: 0,
    });
    await recordFailures(id, 10);
    const failing = await h.request('GET', `/endpoints/${id}`, { key: s.team.key });
    expect(failing.json.health).toEqual({
      circuit: 'open',
      consecutive_failures: 10,
      last_success_at: '2026-11-01T09:00:00.000Z',
      last_failure_at: '2026-11-02T09:59:00.000Z',
      next_probe_at: '2026-11-02T10:04:00.000Z',
    });
    const list = await h.request('GET', `/endpoints?tenant_id=${s.tenantId}`, { key: s.team.key });
    expect(list.json.data[0].health).toEqual(failing.json.health);
    // Health is not configuration: it moves neither the version nor the ETag.
    expect(failing.headers.get('etag')).toBe(fresh.headers.get('etag'));
  });

  it('a new URL resets health: circuit closed, no failures, no outcomes, the probe wait back to 60 s', async () => {
    const s = await setup('url');
    const { id, etag } = await createEndpoint(s);
    await recordFailures(id, 12);
    const renamed = await h.request('PATCH', `/endpoints/${id}`, {
      key: s.team.key,
      ifMatch: etag,
      body: { name: 'Billing' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json.health).toMatchObject({ circuit: 'open', consecutive_failures: 12 });

    const moved = await h.request('PATCH', `/endpoints/${id}`, {
      key: s.team.key,
      ifMatch: renamed.headers.get('etag')!,
      body: { url: `${RECEIVER}/v2` },
    });
    expect(moved.status).toBe(200);
    const reset = {
      circuit: 'closed',
      consecutive_failures: 0,
      last_success_at: null,
      last_failure_at: null,
      next_probe_at: null,
    };
    expect(moved.json.health).toEqual(reset);
    const read = await h.request('GET', `/endpoints/${id}`, { key: s.team.key });
    expect(read.json.health).toEqual(reset);
    const rows: { probe_wait_seconds: number }[] = await h.services.db.query(
      'SELECT probe_wait_seconds FROM endpoint_health WHERE endpoint_id = $1',
      [id],
    );
    expect(rows).toEqual([{ probe_wait_seconds: 60 }]);
  });

  it('a PATCH that keeps the URL never waits for the engine holding the health row; a new URL does', async () => {
    const s = await setup('contend');
    const { id, etag } = await createEndpoint(s);
    // The engine settling an attempt holds the health row for the rest of its transaction.
    const engine = h.services.db.createQueryRunner();
    await engine.connect();
    await engine.startTransaction();
    try {
      await engine.query('SELECT 1 FROM endpoint_health WHERE endpoint_id = $1 FOR UPDATE', [id]);
      const started = Date.now();
      const renamed = await h.request('PATCH', `/endpoints/${id}`, {
        key: s.team.key,
        ifMatch: etag,
        body: { name: 'Renamed', timeout_seconds: 20 },
      });
      expect(renamed.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2_000);

      let settled = false;
      const moving = h
        .request('PATCH', `/endpoints/${id}`, {
          key: s.team.key,
          ifMatch: renamed.headers.get('etag')!,
          body: { url: `${RECEIVER}/moved` },
        })
        .finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      await engine.commitTransaction();
      const moved = await moving;
      expect(moved.status).toBe(200);
      expect(moved.json.url).toBe(`${RECEIVER}/moved`);
    } finally {
      if (engine.isTransactionActive) await engine.rollbackTransaction();
      await engine.release();
    }
  });

  it('queued_count equals the pending deliveries after publishing messages', async () => {
    const s = await setup('queued');
    await post(h, '/event_types', { name: 'order.created' }, { key: s.team.key });
    const a = await createEndpoint(s, { name: 'A' });
    const b = await createEndpoint(s, { name: 'B' });
    const paused = await createEndpoint(s, { name: 'Paused', status: 'paused' });
    const publish = async (body: Record<string, unknown> = {}) => {
      const r = await post(
        h,
        '/messages',
        { tenant_id: s.tenantId, event_type: 'order.created', payload: { n: 1 }, ...body },
        { key: s.team.key },
      );
      expect(r.status, r.text).toBe(202);
    };
    await publish();
    await publish();
    await publish({ endpoint_ids: [a.id] });

    const list = await h.request('GET', `/endpoints?tenant_id=${s.tenantId}`, { key: s.team.key });
    const counts = Object.fromEntries(
      (list.json.data as { name: string; queued_count: number }[]).map((e) => [e.name, e.queued_count]),
    );
    // Paused endpoints queue deliveries while their deadlines run.
    expect(counts).toEqual({ A: 3, B: 2, Paused: 2 });
    for (const endpoint of [a, b, paused]) {
      const read = await h.request('GET', `/endpoints/${endpoint.id}`, { key: s.team.key });
      expect(read.json.queued_count).toBe(await pendingDeliveries(endpoint.id));
    }
  });

  it('a list page is one query whatever its size, and reading one endpoint is one query', async () => {
    const s = await setup('queries');
    const first = await createEndpoint(s);
    // Rate tokens are leased in chunks, so now and then a request also writes its bucket: the least of three.
    const cost = async (path: string) => {
      const counts: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const counter = countRoundTrips({ ignoring: PER_REQUEST_STATEMENTS });
        const r = await h.request('GET', path, { key: s.team.key });
        counter.close();
        expect(r.status).toBe(200);
        counts.push(counter.count);
      }
      return Math.min(...counts);
    };
    const listOfOne = await cost(`/endpoints?tenant_id=${s.tenantId}`);
    for (let i = 0; i < 5; i++) await createEndpoint(s);
    const listOfSix = await cost(`/endpoints?tenant_id=${s.tenantId}`);
    expect(listOfSix).toBe(listOfOne);
    const tenant = await cost(`/tenants/${s.tenantId}`);
    expect(await cost(`/endpoints/${first.id}`)).toBe(tenant);
    expect(listOfOne).toBe(tenant);
  });

  it('resume sets enabled and the circuit half open with a probe due now', async () => {
    const s = await setup('resume');
    const { id } = await createEndpoint(s);
    await recordFailures(id, 10);
    await h.services.db.query(
      `UPDATE endpoints SET status = 'disabled', disabled_reason = 'endpoint_gone', version = version + 1 WHERE id = $1`,
      [id],
    );
    const disabled = await h.request('GET', `/endpoints/${id}`, { key: s.team.key });
    const resumed = await post(
      h,
      `/endpoints/${id}/resume`,
      {},
      { key: s.team.key, ifMatch: disabled.headers.get('etag')! },
    );
    expect(resumed.status, resumed.text).toBe(200);
    const now = h.clock.now().toISOString();
    expect(resumed.json).toMatchObject({
      status: 'enabled',
      disabled_reason: null,
      health: { circuit: 'half_open', consecutive_failures: 10, next_probe_at: now },
    });
    const read = await h.request('GET', `/endpoints/${id}`, { key: s.team.key });
    expect(read.json.health).toEqual(resumed.json.health);

    // An enabled endpoint with an open circuit resumes too; a closed one has nothing to resume.
    await recordFailures(id, 11);
    const open = await h.request('GET', `/endpoints/${id}`, { key: s.team.key });
    const again = await post(h, `/endpoints/${id}/resume`, {}, { key: s.team.key, ifMatch: open.headers.get('etag')! });
    expect(again.json.health.circuit).toBe('half_open');
    const healthy = await createEndpoint(s);
    const refused = await post(h, `/endpoints/${healthy.id}/resume`, {}, { key: s.team.key, ifMatch: healthy.etag });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('invalid_state');
  });
});
