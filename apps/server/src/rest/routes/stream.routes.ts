import {
  isStreamTokenShaped,
  parseInput,
  ServiceError,
  StreamAcksInput,
  type Services,
  type StreamCaller,
} from '@svc/core';
import { z } from 'zod';
import type { StreamHub } from '../../streams/stream-hub.js';
import { parseJsonBody } from '../pipeline.js';
import { defineUnauthenticatedRoute, type UnauthenticatedRequest, type UnauthenticatedRouteSpec } from '../route.js';
import { ErrorShape } from '../shapes.js';

const StreamAcksResultShape = z
  .strictObject({
    results: z.array(
      z.strictObject({
        delivery_id: z.string(),
        result: z
          .enum(['settled', 'stale', 'unknown'])
          .describe(
            'settled: the answer settled the attempt; stale: that attempt is no longer leased (it timed out, was answered already, or its stream ended); unknown: not a delivery of this endpoint',
          ),
      }),
    ),
  })
  .meta({ id: 'StreamAcksResult', description: 'What each acknowledgement did, in the order sent' });

/**
 * The caller a request's stream token names, for the endpoint in its path; 401 for anything else (no token, a
 * team key, a revoked token, another endpoint's): the answer does not say which.
 */
async function streamCaller(services: Services, request: UnauthenticatedRequest): Promise<StreamCaller> {
  const token = bearerOf(request);
  const caller = token ? await services.streamTokens.authenticate(request.params['id'] ?? '', token) : null;
  if (!caller) throw unauthorized();
  return caller;
}

/** The request's bearer token, or ''. */
function bearerOf(request: UnauthenticatedRequest): string {
  const header = request.headers.authorization;
  return typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7).trim() : '';
}

const unauthorized = () =>
  new ServiceError('unauthorized', 'a stream token of this endpoint is required (Bearer whst_...)');

/** The stream itself and its acknowledgements (docs/streams.md): a stream token authenticates both. */
export function streamRoutes(services: Services, hub: StreamHub): UnauthenticatedRouteSpec[] {
  return [
    defineUnauthenticatedRoute({
      operationId: 'openEndpointStream',
      summary:
        "A stream endpoint's deliveries as Server-Sent Events (event delivery; acknowledge each with POST .../stream/acks)",
      method: 'GET',
      path: '/endpoints/:id/stream',
      auth: 'stream_token',
      rateClass: 'none',
      responses: { 200: null, 401: ErrorShape, 429: ErrorShape },
      eventStreams: [200],
      async handler(request) {
        const caller = await streamCaller(services, request);
        const takeOver = await hub.open(caller, request.remoteAddress);
        return { status: 200, takeOver };
      },
    }),
    defineUnauthenticatedRoute({
      operationId: 'acknowledgeStreamDeliveries',
      summary: "Acknowledge up to 100 streamed deliveries with the status each receiver's handler answered",
      method: 'POST',
      path: '/endpoints/:id/stream/acks',
      auth: 'stream_token',
      rateClass: 'none',
      input: StreamAcksInput,
      responses: {
        200: StreamAcksResultShape,
        400: ErrorShape,
        401: ErrorShape,
        413: ErrorShape,
        415: ErrorShape,
        429: ErrorShape,
      },
      async handler(request) {
        const token = bearerOf(request);
        // A token of the wrong shape is refused before anything else; the others are checked in the statement that
        // reads the acknowledged leases (no round trip of their own), after the body: a body that is not valid is
        // refused only once the token is known good, so a bad token is 401 whatever it sent.
        if (!isStreamTokenShaped(token)) throw unauthorized();
        let input: StreamAcksInput;
        try {
          input = parseInput(
            StreamAcksInput,
            parseJsonBody(request.rawBody, request.headers['content-type'] as string | undefined),
          );
        } catch (error) {
          hub.spendAcks(token, 1);
          await streamCaller(services, request);
          throw error;
        }
        hub.spendAcks(token, input.acks.length);
        const results = await hub.acknowledge(
          request.params['id'] ?? '',
          token,
          input.acks.map((ack) => ({ deliveryId: ack.delivery_id, attempt: ack.attempt, status: ack.status })),
        );
        if (!results) throw unauthorized();
        return {
          status: 200,
          body: { results: input.acks.map((ack, i) => ({ delivery_id: ack.delivery_id, result: results[i]! })) },
        };
      },
    }),
  ];
}
