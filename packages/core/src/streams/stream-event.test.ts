import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import type { ClaimedAttempt } from '../engine/dispatch.service.js';
import { streamEventData } from './stream-event.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

function attempt(body: Buffer): ClaimedAttempt {
  return {
    deliveryId: 'wdd_01',
    messageId: 'wdm_01',
    endpointId: 'wde_01',
    teamId: 'team_01',
    tenantId: 'wdt_01',
    eventType: 'order.created',
    attemptId: 'wda_01',
    attemptNumber: 2,
    trigger: 'retry',
    url: '',
    urlRevision: '1',
    timeoutMs: 10_000,
    contentType: 'application/json',
    body,
    headers: { 'X-Team': 'blue' },
    authorization: null,
    signingSecrets: [SECRET],
    retryDelaysSeconds: [1],
    expiresAt: new Date(),
    dueSince: new Date(),
    startedAt: new Date(),
    traceparent: null,
    sequence: '7',
  };
}

describe('a stream event', () => {
  it('carries UTF-8 bodies as text, lower-case push headers, and verifies with standardwebhooks', () => {
    const body = Buffer.from('{"note":"caf\u00e9 \u2603"}', 'utf8');
    const data = streamEventData(attempt(body), 'https://svc.test/v1', 1_800_000_000_000);
    expect(data).toMatchObject({
      delivery_id: 'wdd_01',
      message_id: 'wdm_01',
      attempt: 2,
      event_type: 'order.created',
    });
    expect(data.body).toBe(body.toString('utf8'));
    expect(data.body_base64).toBeUndefined();
    expect(data.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Svc-Webhooks/1.0 (+https://svc.test/v1)',
      'x-team': 'blue',
      'webhook-id': 'wdm_01',
      'webhook-timestamp': '1800000000',
      'svc-delivery-id': 'wdd_01',
      'svc-attempt-id': 'wda_01',
      'svc-event-type': 'order.created',
      'svc-sequence': '7',
    });
    expect(Object.keys(data.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(() =>
      new Webhook(SECRET).verify(data.body!, {
        ...data.headers,
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      }),
    ).toThrow(); // the timestamp is part of what is signed
    const fresh = streamEventData(attempt(body), 'https://svc.test/v1');
    expect(new Webhook(SECRET).verify(fresh.body!, fresh.headers)).toEqual({ note: 'caf\u00e9 \u2603' });
  });

  it('carries other bytes as base64, signed over the exact bytes', () => {
    const body = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
    const data = streamEventData(attempt(body), 'https://svc.test/v1', 1_800_000_000_000);
    expect(data.body).toBeUndefined();
    expect(Buffer.from(data.body_base64!, 'base64')).toEqual(body);
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key)
      .update(Buffer.concat([Buffer.from('wdm_01.1800000000.'), body]))
      .digest('base64');
    expect(data.headers['webhook-signature']).toBe(`v1,${expected}`);
  });
});
