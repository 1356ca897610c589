import { describe, expect, it } from 'vitest';
import { buildDeliveryHeaders } from './delivery-headers.js';

const INPUT = {
  contentType: 'application/json',
  docsUrl: 'https://docs.svc.example/webhooks',
  custom: { 'X-Tenant': 'acme', 'x-trace': '1' },
  authorization: 'Bearer token-1',
  msgId: 'wdm_1',
  timestamp: 1_700_000_000,
  signature: 'v1,abc= v1,def=',
  deliveryId: 'wdd_1',
  attemptId: 'wda_1',
  eventType: 'invoice.paid',
};

describe('buildDeliveryHeaders', () => {
  it('produces the spec table in order', () => {
    expect(Object.entries(buildDeliveryHeaders(INPUT))).toEqual([
      ['Content-Type', 'application/json'],
      ['User-Agent', 'Svc-Webhooks/1.0 (+https://docs.svc.example/webhooks)'],
      ['X-Tenant', 'acme'],
      ['x-trace', '1'],
      ['Authorization', 'Bearer token-1'],
      ['webhook-id', 'wdm_1'],
      ['webhook-timestamp', '1700000000'],
      ['webhook-signature', 'v1,abc= v1,def='],
      ['Svc-Delivery-Id', 'wdd_1'],
      ['Svc-Attempt-Id', 'wda_1'],
      ['Svc-Event-Type', 'invoice.paid'],
    ]);
  });

  it('sends no Authorization when the endpoint has none', () => {
    expect(buildDeliveryHeaders({ ...INPUT, authorization: null })).not.toHaveProperty('Authorization');
  });

  it('never lets a custom header replace a service header or the framing', () => {
    const headers = buildDeliveryHeaders({
      ...INPUT,
      authorization: null,
      custom: {
        'WEBHOOK-SIGNATURE': 'v1,forged',
        'content-type': 'text/html',
        'svc-event-type': 'other',
        Host: 'internal.example',
        'Transfer-Encoding': 'chunked',
        Authorization: 'Bearer smuggled',
        'X-Kept': 'yes',
      },
    });
    const lower = Object.keys(headers).map((name) => name.toLowerCase());
    expect(new Set(lower).size).toBe(lower.length);
    expect(headers).toMatchObject({ 'webhook-signature': 'v1,abc= v1,def=', 'Content-Type': 'application/json' });
    expect(headers).not.toHaveProperty('Host');
    expect(headers).not.toHaveProperty('Transfer-Encoding');
    expect(headers).not.toHaveProperty('Authorization');
    expect(headers['X-Kept']).toBe('yes');
  });
});
