import { expect } from 'vitest';
import type { DeliveryStack } from '../../../worker/src/delivery/delivery.testing.js';
import { post } from '../testing/harness.js';
import { SseClient } from './sse-client.testing.js';

/** A stream endpoint of its own tenant, with its signing secret and one stream token. */
export interface StreamEndpoint {
  tenantId: string;
  endpointId: string;
  secret: string;
  token: string;
  tokenId: string;
}

/** Short settings, so heartbeats, polls and stalls happen within a test. */
export const FAST_STREAMS = {
  SVC_STREAM_HEARTBEAT_SECONDS: '1',
  SVC_STREAM_POLL_SECONDS: '1',
  SVC_STREAM_STALL_SECONDS: '3',
};

let tenants = 0;

export async function streamEndpoint(
  stack: DeliveryStack,
  extra: Record<string, unknown> = {},
  tenantId?: string,
): Promise<StreamEndpoint> {
  const { h } = stack;
  tenants += 1;
  const tenant = tenantId ?? (await post(h, '/tenants', { external_id: `stream-${tenants}`, name: 'Stream' })).json.id;
  const endpoint = await post(h, '/endpoints', { tenant_id: tenant, delivery_mode: 'stream', ...extra });
  expect(endpoint.status, endpoint.text).toBe(201);
  const token = await post(h, `/endpoints/${endpoint.json.id}/stream-tokens`, { name: 'test' });
  expect(token.status, token.text).toBe(201);
  return {
    tenantId: tenant,
    endpointId: endpoint.json.id,
    secret: endpoint.json.signing_secret,
    token: token.json.token,
    tokenId: token.json.id,
  };
}

export function openStream(stack: DeliveryStack, endpoint: StreamEndpoint, token = endpoint.token): Promise<SseClient> {
  return SseClient.open(`${stack.h.baseUrl}/endpoints/${endpoint.endpointId}/stream`, token);
}

export async function ack(
  stack: DeliveryStack,
  endpoint: StreamEndpoint,
  acks: { delivery_id: string; attempt: number; status: number | 'error' }[],
  token = endpoint.token,
): Promise<{
  status: number;
  json: { results?: { delivery_id: string; result: string }[]; error?: { code: string } };
}> {
  const response = await fetch(`${stack.h.baseUrl}/endpoints/${endpoint.endpointId}/stream/acks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ acks }),
  });
  return { status: response.status, json: await response.json() };
}

/** A delivery's stored state and its attempts, oldest first. */
export async function deliveryRecord(
  stack: DeliveryStack,
  deliveryId: string,
): Promise<{
  status: string;
  attempts: { number: number; status_code: number | null; error_kind: string | null; started_at: Date }[];
}> {
  const [delivery] = (await stack.h.services.db.query(`SELECT status FROM deliveries WHERE id = $1`, [deliveryId])) as {
    status: string;
  }[];
  const attempts = (await stack.h.services.db.query(
    `SELECT number, status_code, error_kind, started_at, created_at FROM attempts WHERE delivery_id = $1 ORDER BY number`,
    [deliveryId],
  )) as { number: number; status_code: number | null; error_kind: string | null; started_at: Date }[];
  return { status: delivery!.status, attempts };
}
