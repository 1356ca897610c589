import { ENDPOINT_TEST_RAW_FIELDS, EndpointTestInput, sendEndpointTest, type Services } from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { ErrorShape } from '../shapes.js';
import { MessageShape } from './messages.routes.js';

/** POST /endpoints/{id}/test: a paid test message (svc.test) to one enabled endpoint. */
export function endpointTestRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      operationId: 'testEndpoint',
      summary:
        'Send a test message (event type svc.test, origin test) to one endpoint, skipping its event types, filter ' +
        'and transform; charged as ingestion plus delivery',
      method: 'POST',
      path: '/endpoints/:id/test',
      auth: 'secret_key',
      rateClass: 'admission',
      idempotent: true,
      input: EndpointTestInput,
      rawFields: ENDPOINT_TEST_RAW_FIELDS,
      responses: {
        202: MessageShape,
        402: ErrorShape,
        404: ErrorShape,
        409: ErrorShape,
        413: ErrorShape,
        422: ErrorShape,
        429: ErrorShape,
      },
      async handler({ ctx, params, input }) {
        return { status: 202, body: await sendEndpointTest(services, ctx, params['id']!, input) };
      },
    }),
  ];
}
