import {
  CreateStreamTokenInput,
  ListStreamTokensQuery,
  parseInput,
  type Services,
  type StreamConnectionView,
  type StreamTokenView,
} from '@svc/core';
import { z } from 'zod';
import { defineRoute, type RouteResult, type RouteSpec } from '../route.js';
import { createdAt, ErrorShape, listOf, queryOf, timestamp } from '../shapes.js';

const StreamTokenShape = z
  .strictObject({
    id: z.string().startsWith('wdk_').describe('Stream token ID (wdk_...)'),
    name: z.string().describe('What the token is for (a laptop, a server); may be empty'),
    created_at: createdAt,
    last_used_at: timestamp.nullable().describe('When the token last opened a stream or acknowledged (to the minute)'),
  })
  .meta({ id: 'StreamToken', description: "A stream endpoint's bearer token; the token itself is shown only once" });

const StreamTokenWithSecretShape = StreamTokenShape.extend({
  token: z
    .string()
    .startsWith('whst_')
    .optional()
    .describe('The bearer token (whst_...), shown only in this answer; an idempotent replay does not show it'),
}).meta({ id: 'StreamTokenWithSecret', description: 'A new stream token with its secret value, shown this once' });

const StreamConnectionShape = z
  .strictObject({
    id: z.string().startsWith('wdc_').describe('Stream connection ID (wdc_...)'),
    token_id: z.string().startsWith('wdk_').describe('The token that opened it'),
    opened_at: timestamp.describe('When the stream opened'),
    remote_address: z.string().describe("The receiver's address as the server saw it"),
    unacknowledged: z.number().int().describe('Deliveries offered on it and not acknowledged yet'),
  })
  .meta({ id: 'StreamConnection', description: 'An open stream of a stream endpoint, in any server process' });

const renderToken = (view: StreamTokenView) => ({
  id: view.id,
  name: view.name,
  created_at: view.createdAt.toISOString(),
  last_used_at: view.lastUsedAt === null ? null : view.lastUsedAt.toISOString(),
});

const renderConnection = (view: StreamConnectionView) => ({
  id: view.id,
  token_id: view.tokenId,
  opened_at: view.openedAt.toISOString(),
  remote_address: view.remoteAddress,
  unacknowledged: view.unacknowledged,
});

/** Stream tokens and open streams of a stream endpoint (docs/streams.md), managed with a team key. */
export function streamTokenRoutes(services: Services): RouteSpec[] {
  const { streamTokens, streamConnections } = services;
  return [
    defineRoute({
      operationId: 'createStreamToken',
      summary: 'Create a bearer token for a stream endpoint (shown once; stream endpoints only: 409 otherwise)',
      method: 'POST',
      path: '/endpoints/:id/stream-tokens',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreateStreamTokenInput,
      responses: { 201: StreamTokenWithSecretShape, 404: ErrorShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params, input }) {
        const { token, secret } = await streamTokens.create(ctx, params['id']!, input);
        return { status: 201, body: { ...renderToken(token), token: secret } };
      },
      // The token is never stored: a replay answers the same token without its value.
      storedBody: (result: RouteResult) => {
        const { token: _secret, ...rest } = result.body as { token?: string };
        return rest;
      },
    }),
    defineRoute({
      operationId: 'listStreamTokens',
      summary: "List a stream endpoint's tokens that are not revoked, oldest first (never their values; none for push)",
      method: 'GET',
      path: '/endpoints/:id/stream-tokens',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListStreamTokensQuery, {}),
      responses: { 200: listOf(StreamTokenShape, 'StreamTokenList'), 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params, query }) {
        const page = await streamTokens.list(ctx, params['id']!, parseInput(ListStreamTokensQuery, query));
        return { status: 200, body: { data: page.data.map(renderToken), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'revokeStreamToken',
      summary: 'Revoke a stream token: every stream opened with it ends at once',
      method: 'DELETE',
      path: '/endpoints/:id/stream-tokens/:token_id',
      auth: 'secret_key',
      rateClass: 'config_write',
      responses: { 204: null, 404: ErrorShape },
      async handler({ ctx, params }) {
        await streamTokens.revoke(ctx, params['id']!, params['token_id']!);
        return { status: 204 };
      },
    }),
    defineRoute({
      operationId: 'listStreamConnections',
      summary: "A stream endpoint's open streams in every server process, with what each holds unacknowledged",
      method: 'GET',
      path: '/endpoints/:id/stream-connections',
      auth: 'secret_key',
      rateClass: 'read',
      responses: {
        200: z.strictObject({ data: z.array(StreamConnectionShape) }).meta({ id: 'StreamConnectionList' }),
        404: ErrorShape,
      },
      async handler({ ctx, params }) {
        const connections = await streamConnections.list(ctx, params['id']!);
        return { status: 200, body: { data: connections.map(renderConnection) } };
      },
    }),
  ];
}
