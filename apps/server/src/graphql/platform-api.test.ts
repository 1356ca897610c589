import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHarness, uniqueKey, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

/**
 * The platform API through GraphQL (what the console uses): the same services and error codes as REST, secrets
 * only in the answers that show them once.
 */
let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let environmentId: string;

beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
  const created = await gql('mutation { createFeatureFlagEnvironment(name: "production") { id name revision etag } }');
  environmentId = created.body.data.createFeatureFlagEnvironment.id;
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.clock.advance(10_000);
});

const FLAG =
  'environmentId key enabled description value version revision etag createdBy updatedBy createdAt updatedAt';
const PUT = `mutation($env: ID!, $key: String!, $enabled: Boolean!, $value: String, $etag: String, $idem: String) {
  putFeatureFlag(environmentId: $env, key: $key, enabled: $enabled, value: $value, etag: $etag, idempotencyKey: $idem) { ${FLAG} }
}`;
const SUBSCRIPTION =
  'id url events environmentIds description enabled disabledReason format version etag secretRotationEndsAt createdAt updatedAt';
const CREATE = `mutation($input: CreateEventSubscriptionInput!, $idem: String) {
  createEventSubscription(input: $input, idempotencyKey: $idem) { subscription { ${SUBSCRIPTION} } secret }
}`;

describe('feature flags through GraphQL', () => {
  it('lists environments, puts a flag with an exact JSON value, needs the etag to change it, and deletes it', async () => {
    const list = await gql('{ featureFlagEnvironments { nodes { id name revision } nextCursor } }');
    expect(list.body.data.featureFlagEnvironments.nodes).toEqual([
      { id: environmentId, name: 'production', revision: '0' },
    ]);
    const created = await gql(PUT, { env: environmentId, key: 'checkout.v2', enabled: true, value: '{"pct": 1.50e1}' });
    expect(created.body.errors).toBeUndefined();
    const flag = created.body.data.putFeatureFlag;
    expect(flag).toMatchObject({
      key: 'checkout.v2',
      enabled: true,
      value: '{"pct":1.50e1}',
      version: '1',
      revision: '1',
      createdBy: h.team.keyId,
    });
    const blind = await gql(PUT, { env: environmentId, key: 'checkout.v2', enabled: false });
    expect(blind.body.errors[0].extensions.code).toBe('precondition_required');
    const stale = await gql(PUT, {
      env: environmentId,
      key: 'checkout.v2',
      enabled: false,
      etag: `"wd:${environmentId}/checkout.v2:0"`,
    });
    expect(stale.body.errors[0].extensions.code).toBe('revision_conflict');
    const toggled = await gql(PUT, {
      env: environmentId,
      key: 'checkout.v2',
      enabled: false,
      value: '{"pct":1.50e1}',
      etag: flag.etag,
    });
    expect(toggled.body.data.putFeatureFlag).toMatchObject({ enabled: false, version: '2', revision: '2' });
    const badJson = await gql(PUT, { env: environmentId, key: 'other', enabled: true, value: '{nope' });
    expect(badJson.body.errors[0].extensions).toMatchObject({ code: 'invalid_field', field: 'value' });
    const read = await gql(
      `query($env: ID!) { featureFlags(environmentId: $env) { nodes { key enabled } } featureFlagEnvironment(id: $env) { revision } }`,
      { env: environmentId },
    );
    expect(read.body.data).toEqual({
      featureFlags: { nodes: [{ key: 'checkout.v2', enabled: false }] },
      featureFlagEnvironment: { revision: '2' },
    });
    const events = await gql(
      `query($env: ID!) { platformEvents(environmentId: $env) { nodes { type revision data } } }`,
      { env: environmentId },
    );
    expect(events.body.data.platformEvents.nodes.map((e: { revision: string }) => e.revision)).toEqual(['2', '1']);
    expect(events.body.data.platformEvents.nodes[0].data).toMatchObject({
      flag_key: 'checkout.v2',
      change: 'updated',
      changed_fields: ['enabled'],
    });
    const deleted = await gql(
      `mutation($env: ID!, $etag: String!) { deleteFeatureFlag(environmentId: $env, key: "checkout.v2", etag: $etag) }`,
      {
        env: environmentId,
        etag: toggled.body.data.putFeatureFlag.etag,
      },
    );
    expect(deleted.body.data.deleteFeatureFlag).toBe(true);
    const gone = await gql(`query($env: ID!) { featureFlag(environmentId: $env, key: "checkout.v2") { key } }`, {
      env: environmentId,
    });
    expect(gone.body.errors[0].extensions.code).toBe('not_found');
  });

  it('refuses a key restricted to other environments with environment_access_denied', async () => {
    const other = await gql('mutation { createFeatureFlagEnvironment(name: "other") { id } }');
    const issued = await h.services.teams.createKey(h.team.teamId, {
      environmentIds: [other.body.data.createFeatureFlagEnvironment.id],
    });
    const refused = await gql(PUT, { env: environmentId, key: 'x', enabled: true }, { key: issued.secret });
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'environment_access_denied' });
    const allowed = await gql(
      PUT,
      { env: other.body.data.createFeatureFlagEnvironment.id, key: 'x', enabled: true },
      { key: issued.secret },
    );
    expect(allowed.body.data.putFeatureFlag.key).toBe('x');
  });
});

describe('event subscriptions through GraphQL', () => {
  it('shows the secret only on create and rotate (and to the same key on a replay); never on reads', async () => {
    const idem = uniqueKey();
    const input = {
      url: 'https://receiver.example.com/flags',
      events: ['feature_flags.*'],
      environmentIds: [environmentId],
      format: 'chat_a',
    };
    const created = await gql(CREATE, { input, idem });
    expect(created.body.errors).toBeUndefined();
    const { subscription, secret } = created.body.data.createEventSubscription;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(subscription).toMatchObject({
      enabled: true,
      format: 'chat_a',
      version: '1',
      environmentIds: [environmentId],
    });
    const replay = await gql(CREATE, { input, idem });
    expect(replay.body.data.createEventSubscription.secret).toBe(secret);
    const second = await h.services.teams.createKey(h.team.teamId);
    const otherKey = await gql(CREATE, { input, idem }, { key: second.secret });
    expect(otherKey.body.data.createEventSubscription.secret).toBeNull();
    const read = await gql(
      `query($id: ID!) { eventSubscription(id: $id) { ${SUBSCRIPTION} } eventSubscriptions { nodes { id } } subscribableEvents }`,
      { id: subscription.id },
    );
    expect(JSON.stringify(read.body)).not.toContain('whsec_');
    expect(read.body.data.subscribableEvents).toEqual(['feature_flags.flag.updated', 'feature_flags.*']);
    const rotated = await gql(
      `mutation($id: ID!) { rotateEventSubscriptionSecret(id: $id, overlapSeconds: 60) { subscription { version secretRotationEndsAt } secret } }`,
      { id: subscription.id },
    );
    expect(rotated.body.data.rotateEventSubscriptionSecret.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.rotateEventSubscriptionSecret.secret).not.toBe(secret);
    expect(rotated.body.data.rotateEventSubscriptionSecret.subscription.secretRotationEndsAt).not.toBeNull();
    const again = await gql(
      `mutation($id: ID!) { rotateEventSubscriptionSecret(id: $id, overlapSeconds: 60) { secret } }`,
      { id: subscription.id },
    );
    expect(again.body.errors[0].extensions.code).toBe('invalid_state');
  });

  it('updates with the etag, tests, lists deliveries with attempts, retries one, deletes', async () => {
    const created = await gql(CREATE, {
      input: {
        url: 'https://receiver.example.com/x',
        events: ['feature_flags.flag.updated'],
        environmentIds: [environmentId],
      },
    });
    const { id, etag } = created.body.data.createEventSubscription.subscription;
    const stale = await gql(
      `mutation($id: ID!) { updateEventSubscription(id: $id, etag: "\\"wd:x:0\\"", input: { description: "x" }) { version } }`,
      { id },
    );
    expect(stale.body.errors[0].extensions.code).toBe('revision_conflict');
    const updated = await gql(
      `mutation($id: ID!, $etag: String!) { updateEventSubscription(id: $id, etag: $etag, input: { description: "ops", events: ["feature_flags.*"] }) { description events version } }`,
      { id, etag },
    );
    expect(updated.body.data.updateEventSubscription).toEqual({
      description: 'ops',
      events: ['feature_flags.*'],
      version: '2',
    });
    const test = await gql(`mutation($id: ID!) { testEventSubscription(id: $id) { eventId endpointId } }`, { id });
    expect(test.body.data.testEventSubscription).toEqual({ eventId: expect.stringMatching(/^evt_/), endpointId: id });
    const deliveries = await gql(
      `query($id: ID!) { eventSubscriptionDeliveries(subscriptionId: $id) { nodes { id eventId eventType status sequence trigger attempts { attempt statusCode } } nextCursor } }`,
      { id },
    );
    const [delivery] = deliveries.body.data.eventSubscriptionDeliveries.nodes;
    expect(delivery).toMatchObject({
      eventId: test.body.data.testEventSubscription.eventId,
      eventType: 'feature_flags.webhook.test',
      status: 'pending',
      sequence: '1',
      trigger: 'event',
      attempts: [],
    });
    const retry = await gql(
      `mutation($id: ID!, $d: ID!) { retryEventSubscriptionDelivery(subscriptionId: $id, deliveryId: $d) { id eventId } }`,
      { id, d: delivery.id },
    );
    expect(retry.body.data.retryEventSubscriptionDelivery).toEqual({
      id: expect.stringMatching(/^whd_/),
      eventId: delivery.eventId,
    });
    const badStatus = await gql(
      `query($id: ID!) { eventSubscriptionDeliveries(subscriptionId: $id, status: nope) { nextCursor } }`,
      { id },
    );
    expect(badStatus.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(badStatus.body.errors[0].message).toContain('SubscriptionDeliveryStatus');
    const deleted = await gql(
      `mutation($id: ID!) { deleteEventSubscription(id: $id) { id deleted inFlightMayComplete } }`,
      { id },
    );
    expect(deleted.body.data.deleteEventSubscription).toEqual({ id, deleted: true, inFlightMayComplete: false });
    const missing = await gql(`query($id: ID!) { eventSubscription(id: $id) { id } }`, { id });
    expect(missing.body.errors[0].extensions.code).toBe('not_found');
  });
});
