import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ limits: { max_tenants: 3, max_event_types: 3 } });
});
afterAll(async () => {
  await h.close();
});

describe('tenants', () => {
  it('creates a tenant with every field, defaults and an ETag', async () => {
    const response = await post(h, '/tenants', { external_id: 'acme:eu-1.prod_A', name: 'Acmé Ltd' });
    expect(response.status).toBe(201);
    expect(response.json).toEqual({
      id: expect.stringMatching(/^wdt_[0-9a-z]{26}$/),
      external_id: 'acme:eu-1.prod_A',
      name: 'Acmé Ltd',
      metadata: {},
      status: 'active',
      version: '1',
      created_at: '2026-11-02T10:00:00.000Z',
      updated_at: '2026-11-02T10:00:00.000Z',
    });
    expect(response.headers.get('etag')).toBe(`"wd:${response.json.id}:1"`);
    const read = await h.request('GET', `/tenants/${response.json.id}`);
    expect(read.json).toEqual(response.json);
    expect(read.headers.get('etag')).toBe(response.headers.get('etag'));
  });

  it.each([
    [{ name: 'x' }, 'external_id'],
    [{ external_id: 'x' }, 'name'],
    [{ external_id: '', name: 'x' }, 'external_id'],
    [{ external_id: 'a'.repeat(129), name: 'x' }, 'external_id'],
    [{ external_id: 'has space', name: 'x' }, 'external_id'],
    [{ external_id: 'x', name: '' }, 'name'],
    [{ external_id: 'x', name: 'é'.repeat(65) }, 'name'],
    [{ external_id: 'x', name: 5 }, 'name'],
    [{ external_id: 'x', name: 'n', metadata: [] }, 'metadata'],
    [{ external_id: 'x', name: 'n', metadata: { a: 1 } }, 'metadata.a'],
  ])('rejects %j with 422 invalid_field on %s', async (body, field) => {
    const response = await post(h, '/tenants', body);
    expect(response.status).toBe(422);
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field });
  });

  it('accepts a 128-byte name and a 128-character external_id', async () => {
    const team = await h.newTeam('bounds');
    const response = await post(
      h,
      '/tenants',
      { external_id: 'b'.repeat(128), name: 'é'.repeat(64) },
      { key: team.key },
    );
    expect(response.status).toBe(201);
  });

  it('patches name and replaces metadata in full; an unchanged request keeps the version', async () => {
    const created = await post(h, '/tenants', { external_id: 'patchy', name: 'P', metadata: { a: '1', b: '2' } });
    const id = created.json.id as string;
    const patched = await h.request('PATCH', `/tenants/${id}`, {
      ifMatch: created.headers.get('etag')!,
      body: { metadata: { c: '3' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ name: 'P', metadata: { c: '3' }, version: '2' });
    const same = await h.request('PATCH', `/tenants/${id}`, {
      ifMatch: patched.headers.get('etag')!,
      body: { name: 'P', metadata: { c: '3' } },
    });
    expect(same.json.version).toBe('2');
    expect(same.headers.get('etag')).toBe(patched.headers.get('etag'));
    const immutable = await h.request('PATCH', `/tenants/${id}`, {
      ifMatch: same.headers.get('etag')!,
      body: { external_id: 'other' },
    });
    expect(immutable.status).toBe(422);
    expect(immutable.json.error.field).toBe('external_id');
  });

  it('deletes: the tenant stays readable and listed as deleted and its external_id is reserved for 90 days', async () => {
    const team = await h.newTeam('deleting');
    const created = await post(h, '/tenants', { external_id: 'gone', name: 'Gone' }, { key: team.key });
    const id = created.json.id as string;
    const deleted = await h.request('DELETE', `/tenants/${id}`, {
      key: team.key,
      ifMatch: created.headers.get('etag')!,
    });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const read = await h.request('GET', `/tenants/${id}`, { key: team.key });
    expect(read.json).toMatchObject({ status: 'deleted', version: '2' });
    const listed = await h.request('GET', '/tenants', { key: team.key });
    expect(listed.json.data.map((t: { id: string }) => t.id)).toContain(id);
    const patch = await h.request('PATCH', `/tenants/${id}`, {
      key: team.key,
      ifMatch: read.headers.get('etag')!,
      body: { name: 'x' },
    });
    expect(patch.status).toBe(409);
    expect(patch.json.error.code).toBe('invalid_state');
    const again = await h.request('DELETE', `/tenants/${id}`, { key: team.key, ifMatch: read.headers.get('etag')! });
    expect(again.status).toBe(204);

    const reuse = await post(h, '/tenants', { external_id: 'gone', name: 'Again' }, { key: team.key });
    expect(reuse.status).toBe(409);
    expect(reuse.json.error).toMatchObject({ code: 'resource_in_use', resource_id: id });
    h.clock.advance(90 * DAY - 1000);
    expect((await post(h, '/tenants', { external_id: 'gone', name: 'Again' }, { key: team.key })).status).toBe(409);
    h.clock.advance(2000);
    const later = await post(h, '/tenants', { external_id: 'gone', name: 'Again' }, { key: team.key });
    expect(later.status).toBe(201);
    expect(later.json.id).not.toBe(id);
  });

  it('answers 409 resource_in_use with the holder for a taken external_id', async () => {
    const team = await h.newTeam('dupes');
    const first = await post(h, '/tenants', { external_id: 'dup', name: 'A' }, { key: team.key });
    const second = await post(h, '/tenants', { external_id: 'dup', name: 'B' }, { key: team.key });
    expect(second.status).toBe(409);
    expect(second.json.error).toMatchObject({ code: 'resource_in_use', resource_id: first.json.id });
  });

  it('answers 409 quota_exceeded at the tenant limit; deleted tenants free their place', async () => {
    const team = await h.newTeam('quota');
    const made = [];
    for (let i = 0; i < 3; i += 1)
      made.push(await post(h, '/tenants', { external_id: `q${i}`, name: 'Q' }, { key: team.key }));
    const over = await post(h, '/tenants', { external_id: 'q3', name: 'Q' }, { key: team.key });
    expect(over.status).toBe(409);
    expect(over.json.error.code).toBe('quota_exceeded');
    await h.request('DELETE', `/tenants/${made[0]!.json.id}`, {
      key: team.key,
      ifMatch: made[0]!.headers.get('etag')!,
    });
    expect((await post(h, '/tenants', { external_id: 'q3', name: 'Q' }, { key: team.key })).status).toBe(201);
  });

  it('filters the list by external_id', async () => {
    const team = await h.newTeam('filter');
    await post(h, '/tenants', { external_id: 'f1', name: 'F' }, { key: team.key });
    const f2 = await post(h, '/tenants', { external_id: 'f2', name: 'F' }, { key: team.key });
    const list = await h.request('GET', '/tenants?external_id=f2', { key: team.key });
    expect(list.json).toEqual({ data: [f2.json], next_cursor: null });
  });
});

describe('event types', () => {
  it('creates with defaults and keeps the example exactly as written', async () => {
    const team = await h.newTeam('catalog');
    const raw =
      '{"name":"invoice.paid","example": {"amount" : 1.50, "big": 12345678901234567890, "e":"\\u00e9", "n": [1e3, -0.0]}}';
    const created = await h.request('POST', '/event_types', {
      key: team.key,
      idempotencyKey: 'et-1',
      body: raw,
      raw: true,
    });
    expect(created.status).toBe(201);
    expect(created.text).toContain(
      '"example":{"amount" : 1.50, "big": 12345678901234567890, "e":"\\u00e9", "n": [1e3, -0.0]}',
    );
    expect(created.json).toMatchObject({ name: 'invoice.paid', description: '', archived: false, version: '1' });
    const read = await h.request('GET', `/event_types/${created.json.id}`, { key: team.key });
    expect(read.text).toBe(created.text);
    const nullExample = await post(h, '/event_types', { name: 'invoice.void', example: null }, { key: team.key });
    expect(nullExample.json.example).toBeNull();
    const scalar = await post(h, '/event_types', { name: 'invoice.scalar', example: 'text' }, { key: team.key });
    expect(scalar.json.example).toBe('text');
  });

  it.each([
    ['Invoice.Paid', 'name'],
    ['invoice..paid', 'name'],
    ['.invoice', 'name'],
    ['invoice paid', 'name'],
    ['svc.test', 'name'],
    ['webhooks.delivery.failed', 'name'],
    ['a'.repeat(129), 'name'],
  ])('rejects the name %s with 422 invalid_field', async (name, field) => {
    const response = await post(h, '/event_types', { name });
    expect(response.status).toBe(422);
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field });
  });

  it('bounds description (4,096 bytes) and example (16 KiB)', async () => {
    const team = await h.newTeam('bounds-et');
    expect(
      (await post(h, '/event_types', { name: 'd.ok', description: 'x'.repeat(4096) }, { key: team.key })).status,
    ).toBe(201);
    const longDescription = await post(
      h,
      '/event_types',
      { name: 'd.long', description: 'é'.repeat(2049) },
      { key: team.key },
    );
    expect(longDescription.json.error).toMatchObject({ code: 'invalid_field', field: 'description' });
    const exactly16k = `{"name":"e.ok","example":"${'x'.repeat(16_384 - 2)}"}`;
    expect(
      (await h.request('POST', '/event_types', { key: team.key, idempotencyKey: 'e-ok', body: exactly16k, raw: true }))
        .status,
    ).toBe(201);
    const over = `{"name":"e.big","example":"${'x'.repeat(16_384 - 1)}"}`;
    const tooBig = await h.request('POST', '/event_types', {
      key: team.key,
      idempotencyKey: 'e-big',
      body: over,
      raw: true,
    });
    expect(tooBig.json.error).toMatchObject({ code: 'invalid_field', field: 'example' });
  });

  it('refuses a name in use, archived ones included, naming the holder', async () => {
    const team = await h.newTeam('names');
    const first = await post(h, '/event_types', { name: 'user.created' }, { key: team.key });
    await h.request('DELETE', `/event_types/${first.json.id}`, { key: team.key, ifMatch: first.headers.get('etag')! });
    const again = await post(h, '/event_types', { name: 'user.created' }, { key: team.key });
    expect(again.status).toBe(409);
    expect(again.json.error).toMatchObject({ code: 'resource_in_use', resource_id: first.json.id });
  });

  it('archives with DELETE (idempotently), unarchives with PATCH archived false, refuses archived true', async () => {
    const team = await h.newTeam('archive');
    const created = await post(h, '/event_types', { name: 'ship.sent', description: 'Sent' }, { key: team.key });
    const id = created.json.id as string;
    const archived = await h.request('DELETE', `/event_types/${id}`, {
      key: team.key,
      ifMatch: created.headers.get('etag')!,
    });
    expect(archived.status).toBe(204);
    const read = await h.request('GET', `/event_types/${id}`, { key: team.key });
    expect(read.json).toMatchObject({ archived: true, version: '2' });
    const twice = await h.request('DELETE', `/event_types/${id}`, {
      key: team.key,
      ifMatch: read.headers.get('etag')!,
    });
    expect(twice.status).toBe(204);
    expect((await h.request('GET', `/event_types/${id}`, { key: team.key })).json.version).toBe('2');
    await expect(h.services.eventTypes.requireActiveEventType({ actor: team }, 'ship.sent')).rejects.toMatchObject({
      code: 'invalid_event_type',
    });
    const refuse = await h.request('PATCH', `/event_types/${id}`, {
      key: team.key,
      ifMatch: read.headers.get('etag')!,
      body: { archived: true },
    });
    expect(refuse.status).toBe(422);
    expect(refuse.json.error.field).toBe('archived');
    const restored = await h.request('PATCH', `/event_types/${id}`, {
      key: team.key,
      ifMatch: read.headers.get('etag')!,
      body: { archived: false },
    });
    expect(restored.json).toMatchObject({ archived: false, version: '3', description: 'Sent' });
    const listed = await h.request('GET', '/event_types?name=ship.sent', { key: team.key });
    expect(listed.json.data).toHaveLength(1);
  });

  it('patches description and example (null clears it); the name is immutable; unchanged keeps the version', async () => {
    const team = await h.newTeam('patch-et');
    const created = await post(h, '/event_types', { name: 'a.b', example: { x: 1 } }, { key: team.key });
    const id = created.json.id as string;
    const changed = await h.request('PATCH', `/event_types/${id}`, {
      key: team.key,
      ifMatch: created.headers.get('etag')!,
      body: '{"example": [ 1.0 ,2 ]}',
      raw: true,
    });
    expect(changed.status).toBe(200);
    expect(changed.text).toContain('"example":[ 1.0 ,2 ]');
    const same = await h.request('PATCH', `/event_types/${id}`, {
      key: team.key,
      ifMatch: changed.headers.get('etag')!,
      body: '{"example":[ 1.0 ,2 ]}',
      raw: true,
    });
    expect(same.json.version).toBe(changed.json.version);
    const cleared = await h.request('PATCH', `/event_types/${id}`, {
      key: team.key,
      ifMatch: changed.headers.get('etag')!,
      body: { example: null },
    });
    expect(cleared.json.example).toBeNull();
    const rename = await h.request('PATCH', `/event_types/${id}`, {
      key: team.key,
      ifMatch: cleared.headers.get('etag')!,
      body: { name: 'c.d' },
    });
    expect(rename.json.error).toMatchObject({ code: 'invalid_field', field: 'name' });
  });

  it('answers 409 quota_exceeded at the event type limit (archived count)', async () => {
    const team = await h.newTeam('et-quota');
    for (const name of ['q.a', 'q.b', 'q.c'])
      expect((await post(h, '/event_types', { name }, { key: team.key })).status).toBe(201);
    const over = await post(h, '/event_types', { name: 'q.d' }, { key: team.key });
    expect(over.status).toBe(409);
    expect(over.json.error.code).toBe('quota_exceeded');
  });
});

describe('settings, capabilities and rates', () => {
  it('reads settings with defaults and an ETag, and patches them', async () => {
    const team = await h.newTeam('settings');
    const read = await h.request('GET', '/settings', { key: team.key });
    expect(read.json).toMatchObject({
      configuration_version: '1',
      payload_retention_days: 30,
      response_body_logging: false,
      response_retention_days: 7,
      approved_configuration_version: '1',
    });
    expect(read.json.limits.max_body_bytes).toEqual({ value: 1048576, unit: 'bytes' });
    expect(read.headers.get('etag')).toBe('"wd:settings:1"');
    const patched = await h.request('PATCH', '/settings', {
      key: team.key,
      ifMatch: '"wd:settings:1"',
      body: { payload_retention_days: 7 },
    });
    expect(patched.json).toMatchObject({
      configuration_version: '2',
      payload_retention_days: 7,
      response_retention_days: 7,
    });
    expect(patched.headers.get('etag')).toBe('"wd:settings:2"');
    const unchanged = await h.request('PATCH', '/settings', {
      key: team.key,
      ifMatch: '"wd:settings:2"',
      body: { payload_retention_days: 7 },
    });
    expect(unchanged.json.configuration_version).toBe('2');
    const stale = await h.request('PATCH', '/settings', {
      key: team.key,
      ifMatch: '"wd:settings:1"',
      body: { response_body_logging: true },
    });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('etag')).toBe('"wd:settings:2"');
  });

  it.each([
    [{ payload_retention_days: 0 }, 'payload_retention_days'],
    [{ payload_retention_days: 31 }, 'payload_retention_days'],
    [{ payload_retention_days: 1.5 }, 'payload_retention_days'],
    [{ response_retention_days: 8 }, 'response_retention_days'],
    [{ response_body_logging: 'yes' }, 'response_body_logging'],
    [{ limits: {} }, 'limits'],
    [{ configuration_version: '9' }, 'configuration_version'],
  ])('rejects %j with 422 invalid_field', async (body, field) => {
    const team = await h.newTeam('bad-settings');
    const response = await h.request('PATCH', '/settings', { key: team.key, ifMatch: '"wd:settings:1"', body });
    expect(response.status).toBe(422);
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field });
  });

  it('lists every limit of the spec with its unit, measured false where the spec says so, and the 8 verification kinds', async () => {
    const response = await h.request('GET', '/capabilities');
    const { limits } = response.json;
    expect(Object.keys(limits)).toHaveLength(22);
    expect(limits.admission_rate).toEqual({ value: 100, unit: 'messages per second', measured: false });
    expect(limits.dispatch_rate).toEqual({ value: 1000, unit: 'attempts per second', measured: false });
    expect(limits.max_content_bytes).toEqual({ value: 10737418240, unit: 'bytes' });
    expect(limits.service_concurrency).toEqual({ value: 6, unit: 'requests' });
    expect(response.json.verification_kinds).toEqual([
      'standard_webhooks',
      'hmac',
      'bearer',
      'payments',
      'codehost',
      'commerce',
      'chat',
      'telephony',
    ]);
    expect(response.json).toMatchObject({ egress_ipv4_cidrs: [], ipv6_delivery: false, rate_version: '2026-10-08' });
  });

  it('publishes the rates', async () => {
    const response = await h.request('GET', '/rates');
    expect(response.json).toEqual({
      currency: 'USD',
      version: '2026-10-08',
      effective_at: '2026-10-08T00:00:00.000Z',
      meters: [
        { id: 'webhooks.ingest_64k', unit: 'unit', unit_bytes: 65536, unit_price_usd: '0.00001' },
        { id: 'webhooks.delivery_16k', unit: 'unit', unit_bytes: 16384, unit_price_usd: '0.00005' },
      ],
    });
  });
});
