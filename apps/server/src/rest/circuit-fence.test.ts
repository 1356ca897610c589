import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CIRCUIT_FAILURE_THRESHOLD,
  EngineSteps,
  STEP_WORKER_ID,
  type AttemptResult,
  type ClaimedAttempt,
  type EndpointHealthState,
} from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';

/**
 * Circuit writes are fenced (docs/delivery.md, "Circuits are fenced"): settlement writes an endpoint's circuit only
 * while its row still has the version the owner read with it. Another writer in between (a URL change, a resume,
 * retry_now, another worker's settlement during a handoff) wins; the owner's batch writes nothing of that circuit,
 * emits no circuit event, and reads the row again at its next claim.
 */
let h: Harness;
let tenantId: string;

const failure: AttemptResult = { kind: 'response', status: 500, retryAfterSeconds: null };
const success: AttemptResult = { kind: 'response', status: 200, retryAfterSeconds: null };

beforeAll(async () => {
  h = await startHarness();
  await post(h, '/event_types', { name: 'fence.test' });
  tenantId = (await post(h, '/tenants', { external_id: 'fence', name: 'Fence' })).json.id;
});
afterAll(async () => {
  await h.close();
});

async function endpointWithDeliveries(count: number): Promise<{ endpointId: string; deliveryIds: string[] }> {
  const endpoint = await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/fence' });
  expect(endpoint.status, endpoint.text).toBe(201);
  const endpointId = endpoint.json.id as string;
  for (let i = 0; i < count; i += 1)
    expect((await post(h, '/messages', { tenant_id: tenantId, event_type: 'fence.test', payload: { i } })).status).toBe(
      202,
    );
  const rows: { id: string }[] = await h.services.db.query(
    `SELECT id FROM deliveries WHERE endpoint_id = $1 ORDER BY created_at, id`,
    [endpointId],
  );
  return { endpointId, deliveryIds: rows.map((r) => r.id) };
}

async function healthRow(endpointId: string) {
  const [row]: { circuit: string; consecutive_failures: number; version: string }[] = await h.services.db.query(
    `SELECT circuit, consecutive_failures, version FROM endpoint_health WHERE endpoint_id = $1`,
    [endpointId],
  );
  return row!;
}

async function circuitEvents(endpointId: string): Promise<string[]> {
  const rows: { type: string }[] = await h.services.db.query(
    `SELECT type FROM operational_events WHERE resource_id = $1 AND type LIKE 'webhooks.endpoint.%' ORDER BY id`,
    [endpointId],
  );
  return rows.map((r) => r.type);
}

const outcome = (attempt: ClaimedAttempt, result: AttemptResult) => ({
  attempt,
  result,
  durationMs: 5,
  responseBody: null,
  jitter: 0,
});

/** The circuit an owner holds in memory: what it read (the row's values and version), or what it believes. */
async function memoryOf(endpointId: string, belief: Partial<EndpointHealthState> = {}): Promise<EndpointHealthState> {
  const [row]: {
    circuit: EndpointHealthState['circuit'];
    consecutive_failures: number;
    last_success_at: Date | null;
    last_failure_at: Date | null;
    next_probe_at: Date | null;
    probe_wait_seconds: number;
    version: string;
  }[] = await h.services.db.query(`SELECT * FROM endpoint_health WHERE endpoint_id = $1`, [endpointId]);
  return {
    circuit: row!.circuit,
    consecutiveFailures: row!.consecutive_failures,
    lastSuccessAt: row!.last_success_at,
    lastFailureAt: row!.last_failure_at,
    nextProbeAt: row!.next_probe_at,
    probeWaitSeconds: row!.probe_wait_seconds,
    version: String(row!.version),
    ...belief,
  };
}

describe('circuit writes are fenced', () => {
  it("a failure settling after the URL changed neither opens the new URL's circuit nor says it is failing", async () => {
    const { endpointId, deliveryIds } = await endpointWithDeliveries(1);
    // One failure short of opening, as the engine recorded it; the owner claims and holds that in memory.
    await h.services.db.query(`UPDATE endpoint_health SET consecutive_failures = $2 WHERE endpoint_id = $1`, [
      endpointId,
      CIRCUIT_FAILURE_THRESHOLD - 1,
    ]);
    const steps = new EngineSteps(h.services);
    const [attempt] = await steps.claim(deliveryIds);
    expect(attempt).toBeDefined();
    // The operator points the endpoint at a new URL meanwhile: its health starts over.
    const endpoint = await h.request('GET', `/endpoints/${endpointId}`);
    const patched = await h.request('PATCH', `/endpoints/${endpointId}`, {
      body: { url: 'https://receiver.example.com/fence-new' },
      ifMatch: endpoint.headers.get('etag')!,
    });
    expect(patched.status, patched.text).toBe(200);
    const reset = await healthRow(endpointId);
    expect(reset).toMatchObject({ circuit: 'closed', consecutive_failures: 0 });

    // The old URL's failure settles with the owner's memory (failures at the threshold but one).
    const settled = await steps.settle([outcome(attempt!, failure)]);
    expect(settled.stale).toEqual([endpointId]);
    expect(settled.health.has(endpointId)).toBe(false);
    expect(await healthRow(endpointId)).toEqual(reset);
    expect(await circuitEvents(endpointId)).toEqual([]);
    // The delivery itself settled: its attempt is recorded and it waits for its retry.
    const [delivery]: { status: string; attempt_count: number }[] = await h.services.db.query(
      `SELECT status, attempt_count FROM deliveries WHERE id = $1`,
      [deliveryIds[0]],
    );
    expect(delivery).toEqual({ status: 'retry_wait', attempt_count: 1 });
  });

  it("during a handoff the worker holding an older read writes nothing over the other's counts", async () => {
    const { endpointId, deliveryIds } = await endpointWithDeliveries(2);
    const steps = new EngineSteps(h.services);
    const attempts = await steps.claim(deliveryIds);
    expect(attempts).toHaveLength(2);
    const read = await memoryOf(endpointId);
    // The new owner believes 3 failures so far and settles one more: written, with a new version.
    const first = await h.services.settlement.settle('wkr_new_owner', [outcome(attempts[0]!, failure)], () => ({
      ...read,
      consecutiveFailures: 3,
    }));
    expect(first.stale).toEqual([]);
    const written = await healthRow(endpointId);
    expect(written.consecutive_failures).toBe(4);
    expect(first.health.get(endpointId)?.version).toBe(written.version);
    // The old owner settles its attempt from the read both made: it would have written 1 failure over 4.
    const second = await h.services.settlement.settle(STEP_WORKER_ID, [outcome(attempts[1]!, failure)], () => read);
    expect(second.stale).toEqual([endpointId]);
    expect(await healthRow(endpointId)).toEqual(written);
  });

  it("a probe's settlement writes against the version its claim left: the circuit closes and says it recovered", async () => {
    const { endpointId, deliveryIds } = await endpointWithDeliveries(1);
    await h.services.db.query(
      `UPDATE endpoint_health SET circuit = 'open', consecutive_failures = $2, next_probe_at = $3
        WHERE endpoint_id = $1`,
      [endpointId, CIRCUIT_FAILURE_THRESHOLD, new Date(h.clock.now().getTime() - 1000)],
    );
    const steps = new EngineSteps(h.services);
    const [probe] = await steps.claim(deliveryIds);
    expect(probe?.trigger).toBe('probe');
    // The claim half-opened the circuit (a write, so a new version) and handed that version to the owner.
    expect((await healthRow(endpointId)).circuit).toBe('half_open');
    const settled = await steps.settle([outcome(probe!, success)]);
    expect(settled.stale).toEqual([]);
    expect(await healthRow(endpointId)).toMatchObject({ circuit: 'closed', consecutive_failures: 0 });
    expect(await circuitEvents(endpointId)).toEqual(['webhooks.endpoint.recovered']);
  });
});
