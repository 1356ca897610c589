import { z } from 'zod';
import { unitPrice, unitsFor } from '../billing/billing.service.js';
import type { CallContext } from '../common/context.js';
import { ServiceError } from '../common/errors.js';
import { RawJson } from '../common/raw-json.js';
import type { MessageService } from '../messages/message.service.js';
import type { MessageView } from '../messages/message.view.js';
import type { EndpointService } from './endpoint.service.js';

/** The reserved event type of endpoint tests; never in the catalog. */
export const TEST_EVENT_TYPE = 'svc.test';
export const DEFAULT_TEST_PAYLOAD = '{"test":true}';

/**
 * POST /endpoints/{id}/test. The payload arrives as its exact JSON text (a raw field); JSON null is a payload too.
 * The default is applied here, so `{}` and `{"payload":{"test":true}}` are the same request for idempotency.
 */
export const EndpointTestInput = z.strictObject({
  payload: z.union([z.instanceof(RawJson), z.null()]).default(() => new RawJson(DEFAULT_TEST_PAYLOAD)),
});
export type EndpointTestInput = z.output<typeof EndpointTestInput>;

/** The raw fields of POST /endpoints/{id}/test (kept as exact text by the transport). */
export const ENDPOINT_TEST_RAW_FIELDS = ['payload'] as const;

/**
 * Sends a test message (event type svc.test, origin test) to one endpoint, skipping its event types, filter and
 * transform but using its authentication, signing, retries and billing (ingestion plus delivery). A paused or
 * disabled endpoint refuses with 409 invalid_state and stays as it is.
 */
export async function sendEndpointTest(
  services: { endpoints: EndpointService; messages: MessageService },
  ctx: CallContext,
  endpointId: string,
  input: EndpointTestInput,
): Promise<MessageView> {
  const endpoint = await services.endpoints.getEndpointEntity(ctx, endpointId);
  if (endpoint.status !== 'enabled')
    throw new ServiceError(
      'invalid_state',
      `a ${endpoint.status} endpoint cannot be tested; ${endpoint.status === 'paused' ? 'enable it' : 'resume it'} first`,
    );
  return services.messages.admitMessage(
    ctx,
    { tenant_id: endpoint.tenantId, event_type: TEST_EVENT_TYPE, payload: input.payload, metadata: {} },
    { origin: 'test', testEndpointId: endpoint.id },
  );
}

/**
 * What a test message of these exact (minified) bytes costs: its ingestion and its one delivery, priced as admission
 * prices them (a test skips the endpoint's transform, so the delivery carries the same bytes).
 */
export function endpointTestPriceMicros(bytes: number): bigint {
  return (
    BigInt(unitsFor(bytes, 'webhooks.ingest_64k')) * unitPrice('webhooks.ingest_64k') +
    BigInt(unitsFor(bytes, 'webhooks.delivery_16k')) * unitPrice('webhooks.delivery_16k')
  );
}
