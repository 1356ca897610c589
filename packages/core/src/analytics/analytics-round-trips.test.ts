import { describe, expect, it } from 'vitest';
import { countRoundTrips } from '@svc/db';
import { ManualClock } from '../common/clock.js';
import { parseInput } from '../common/validation.js';
import { RawJson } from '../common/raw-json.js';
import type { AttemptOutcome } from '../engine/settlement.service.js';
import { CreateEndpointInput } from '../endpoints/endpoint.inputs.js';
import { CreateEventTypeInput } from '../event-types/event-type.inputs.js';
import { CreateMessageInput } from '../messages/message.inputs.js';
import { CreateSourceInput } from '../sources/source.inputs.js';
import { CreateTenantInput } from '../tenants/tenant.inputs.js';
import { EngineSteps } from '../testing/engine-steps.js';
import { flushWakes } from '../engine/wake-endpoints.js';
import { useTestCore } from '../testing/test-core.js';

const clock = new ManualClock('2026-11-02T10:00:00Z');
const core = useTestCore(clock);

/**
 * The hot paths' Postgres round trips, counted statement by statement (BEGIN and COMMIT included). The analytics
 * facts ride in statements these paths already send, so the counts are those measured before analytics existed;
 * only a capture that does not verify makes one more (its rejected_auth fact joins the transaction of its
 * operational event: 5 before, 6 now).
 */
describe('round trips of the hot paths with analytics facts', () => {
  it('are the same as without analytics: admission, claim, settlement, cancel, expiry, capture, duplicate, throttled', async () => {
    const s = core.services;
    const team = await s.teams.createTeam('round-trips');
    const key = await s.teams.createKey(team.id);
    await s.teams.setPaymentCard(team.id, true);
    const ctx = { actor: { teamId: team.id, keyId: key.keyId } };
    const tenant = await s.tenants.createTenant(ctx, parseInput(CreateTenantInput, { external_id: 'rt', name: 'RT' }));
    await s.eventTypes.createEventType(ctx, parseInput(CreateEventTypeInput, { name: 'rt.event' }));
    for (let i = 0; i < 3; i += 1)
      await s.endpoints.createEndpoint(
        ctx,
        parseInput(CreateEndpointInput, { tenant_id: tenant.id, url: `https://example.com/${i}` }),
      );
    const input = () =>
      parseInput(CreateMessageInput, { tenant_id: tenant.id, event_type: 'rt.event', payload: new RawJson('{"a":1}') });
    const steps = new EngineSteps(s);
    const counter = countRoundTrips();

    // A wake-up goes after the commit, on a connection of its own, merged with the others of the moment
    // (engine/wake-endpoints.ts): it is counted where it is spent.
    const spent = async () => {
      await flushWakes(s.db);
      return counter.count;
    };
    counter.reset();
    const first = await s.messages.admitMessage(ctx, input(), { origin: 'api' });
    const admission = await spent();

    const deliveryIds = async (messageId: string) =>
      (
        (await s.db.query(`SELECT id FROM deliveries WHERE message_id = $1 ORDER BY id`, [messageId])) as {
          id: string;
        }[]
      ).map((r) => r.id);
    const firstIds = await deliveryIds(first.id);
    counter.reset();
    const claimed = await steps.claim(firstIds);
    // Less the step helper's heartbeat (a worker's, once a second) and its read of the deliveries' endpoints.
    const claim = counter.count - 2;
    expect(claimed).toHaveLength(3);

    const outcomes = (status: number): AttemptOutcome[] =>
      claimed.map((attempt) => ({
        attempt,
        result: { kind: 'response', status, retryAfterSeconds: null },
        durationMs: 5,
        responseBody: null,
        jitter: 0,
      }));
    counter.reset();
    await steps.settle(outcomes(200));
    const settleSuccesses = counter.count;

    const second = await s.messages.admitMessage(ctx, input(), { origin: 'api' });
    await flushWakes(s.db);
    const again = await steps.claim(await deliveryIds(second.id));
    counter.reset();
    await steps.settle(
      again.map((attempt) => ({
        attempt,
        result: { kind: 'response', status: 500, retryAfterSeconds: null },
        durationMs: 5,
        responseBody: null,
        jitter: 0,
      })),
    );
    const settleFailures = counter.count;

    const third = await s.messages.admitMessage(ctx, input(), { origin: 'api' });
    await flushWakes(s.db);
    counter.reset();
    await s.messageRepair.cancelMessage(ctx, third.id);
    const cancel = counter.count;

    const fourth = await s.messages.admitMessage(ctx, input(), { origin: 'api' });
    await flushWakes(s.db);
    clock.advance(73 * 3600_000);
    const expiring = await deliveryIds(fourth.id);
    counter.reset();
    expect(await steps.claim(expiring)).toHaveLength(0);
    // Less the step helper's heartbeat and its read of the deliveries' endpoints.
    const claimExpiring = counter.count - 2;

    const created = await s.sources.createSource(
      ctx,
      parseInput(CreateSourceInput, {
        tenant_id: tenant.id,
        name: 'RT',
        verification: { kind: 'bearer', secret: 'rt-secret-0123456789abcdef' },
        event_type: 'rt.event',
      }),
    );
    const receive = (authorization: string) =>
      s.receive.receive({
        token: created.token!,
        contentType: 'application/json',
        rawBody: Buffer.from('{"b":2}'),
        rawHeaders: ['Authorization', authorization, 'Content-Type', 'application/json'],
        publicUrl: 'https://svc.test/v1/receive/x',
      });
    counter.reset();
    await receive('Bearer rt-secret-0123456789abcdef');
    const capture = await spent();
    counter.reset();
    await receive('Bearer rt-secret-0123456789abcdef');
    const duplicate = counter.count;
    counter.reset();
    await expect(receive('Bearer wrong')).rejects.toMatchObject({ code: 'unauthorized' });
    const rejected = counter.count;
    let throttled = -1;
    for (let i = 0; i < 300 && throttled < 0; i += 1) {
      counter.reset();
      try {
        await s.rateLimits.takeFor(team.id, 'admission');
      } catch {
        throttled = counter.count;
      }
    }

    const counts = {
      admission,
      claim,
      settleSuccesses,
      settleFailures,
      cancel,
      claimExpiring,
      capture,
      duplicate,
      rejected,
      throttled,
    };
    expect(counts).toEqual({
      // BEGIN, the batch's opening statement, its write statement, COMMIT (docs/admission.md), then the wake-up
      // (shared by every admission of the moment; it was a CTE of the write statement, inside the commit); was 6
      // with a pg-boss job per delivery, 5 with a separate charge statement.
      admission: 5,
      claim: 1, // was 12 before the engine's own queue: one statement claims a batch of endpoints
      settleSuccesses: 1, // was 8: one statement settles a batch
      settleFailures: 1, // was 8: a retry is the same statement
      cancel: 8, // was 7: the deliveries' queue rows are locked first, as the engine locks them
      claimExpiring: 6, // was 11: the claim, then a transaction finishing what it found expired
      // Captures take source rate tokens from a lease: the capture writes the bucket, the duplicate takes the next
      // chunk, the rejected one spends a token of it. A capture was 10 before the event-key claim named the message
      // ID at once, 9 with a pg-boss job, 8 before admission took 4 round trips (docs/admission.md). 7 then, plus the
      // wake-up after its commit.
      capture: 8,
      duplicate: 6,
      rejected: 5,
      // The chunk statement that emptied the bucket told the process when its next token can exist: until then a
      // request is refused without a statement, and counted as throttled with the next one (was 1).
      throttled: 0,
    });
  });
});
