import {
  CreateEndpointInput,
  EmptyInput,
  ListEndpointsQuery,
  parseInput,
  PreviewInput,
  RotateSecretInput,
  UpdateEndpointInput,
  previewEndpoint,
  type Actor,
  type EndpointView,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteResult, type RouteSpec } from '../route.js';
import { ErrorShape, listOf, queryOf } from '../shapes.js';
import {
  EndpointShape,
  EndpointWithSecretShape,
  PreviewShape,
  renderEndpoint,
  renderPreview,
  ResumeReplayShape,
} from './endpoint.shapes.js';

const EndpointListShape = listOf(EndpointShape, 'EndpointList');

export function endpointRoutes(services: Services): RouteSpec[] {
  const { endpoints } = services;
  const withEtag = (view: EndpointView) => ({ ETag: view.etag });

  /** Secrets are never stored in idempotency records: the stored body has none. */
  const withoutSecret = (result: RouteResult) => {
    const { signing_secret: _secret, ...rest } = result.body as { signing_secret?: string };
    return rest;
  };
  /** A replay shows the secret only to the key that made it, and only while it is still current. */
  const replayWithSecret = async (stored: Buffer, replay: { actor: Actor; sameKey: boolean }): Promise<Buffer> => {
    if (!replay.sameKey) return stored;
    const { id, secret_version: version } = JSON.parse(stored.toString('utf8')) as {
      id: string;
      secret_version: number;
    };
    const secret = await endpoints.currentSecretMadeBy({ actor: replay.actor }, id, version);
    if (secret === null) return stored;
    const text = stored.toString('utf8');
    return Buffer.from(`${text.slice(0, -1)},"signing_secret":${JSON.stringify(secret)}}`, 'utf8');
  };

  return [
    defineRoute({
      operationId: 'createEndpoint',
      summary: 'Register a receiver endpoint for a tenant (the signing secret is shown once)',
      method: 'POST',
      path: '/endpoints',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreateEndpointInput,
      rawFields: ['filter', 'transform'],
      responses: { 201: EndpointWithSecretShape, 409: ErrorShape, 422: ErrorShape, 503: ErrorShape },
      async handler({ ctx, input }) {
        const { endpoint, signingSecret } = await endpoints.createEndpoint(ctx, input);
        return { status: 201, body: renderEndpoint(endpoint, signingSecret), headers: withEtag(endpoint) };
      },
      storedBody: withoutSecret,
      replayBody: replayWithSecret,
    }),
    defineRoute({
      operationId: 'listEndpoints',
      summary: 'List endpoints (deleted ones excluded), oldest first',
      method: 'GET',
      path: '/endpoints',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListEndpointsQuery, {
        tenant_id: 'Only endpoints of this tenant',
        status: 'Only endpoints with this status',
      }),
      responses: { 200: EndpointListShape, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await endpoints.listEndpoints(ctx, parseInput(ListEndpointsQuery, query));
        return {
          status: 200,
          body: { data: page.data.map((view) => renderEndpoint(view)), next_cursor: page.nextCursor },
        };
      },
    }),
    defineRoute({
      operationId: 'getEndpoint',
      summary: 'Read an endpoint (no secret, header values or authorization)',
      method: 'GET',
      path: '/endpoints/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: EndpointShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        const view = await endpoints.getEndpoint(ctx, params['id']!);
        return { status: 200, body: renderEndpoint(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'updateEndpoint',
      summary:
        'Change an endpoint (null clears filter, transform and authorization; arrays and objects replace in full)',
      method: 'PATCH',
      path: '/endpoints/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      input: UpdateEndpointInput,
      rawFields: ['filter', 'transform'],
      responses: {
        200: EndpointShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
        503: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, input }) {
        const view = await endpoints.updateEndpoint(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: renderEndpoint(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'deleteEndpoint',
      summary: 'Delete an endpoint: no new messages; unclaimed deliveries are canceled',
      method: 'DELETE',
      path: '/endpoints/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      responses: { 204: null, 404: ErrorShape, 412: ErrorShape, 422: ErrorShape, 428: ErrorShape },
      async handler({ ctx, params, ifMatch }) {
        await endpoints.deleteEndpoint(ctx, params['id']!, ifMatch);
        return { status: 204 };
      },
    }),
    defineRoute({
      operationId: 'rotateEndpointSecret',
      summary: 'Rotate the signing secret (shown once); old secrets keep signing for overlap_seconds',
      method: 'POST',
      path: '/endpoints/:id/rotate_secret',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      ifMatch: true,
      input: RotateSecretInput,
      responses: {
        200: EndpointWithSecretShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
        503: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, input }) {
        const { endpoint, signingSecret } = await endpoints.rotateSecret(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: renderEndpoint(endpoint, signingSecret), headers: withEtag(endpoint) };
      },
      storedBody: withoutSecret,
      replayBody: replayWithSecret,
    }),
    defineRoute({
      operationId: 'resumeEndpoint',
      summary: 'Resume a disabled endpoint or one with an open circuit: re-checks the URL, sends one probe',
      method: 'POST',
      path: '/endpoints/:id/resume',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      ifMatch: true,
      input: EmptyInput,
      responses: {
        200: ResumeReplayShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
        503: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, input }) {
        const view = await endpoints.resumeEndpoint(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: renderEndpoint(view), headers: withEtag(view) };
      },
      // The spec: an idempotent replay of resume returns only id and status.
      storedBody: (result) => {
        const { id, status } = result.body as { id: string; status: string };
        return { id, status };
      },
    }),
    defineRoute({
      operationId: 'previewEndpoint',
      summary: "Evaluate an endpoint's event patterns, filter and transform on a payload; nothing is sent or charged",
      method: 'POST',
      path: '/previews',
      auth: 'secret_key',
      rateClass: 'read',
      input: PreviewInput,
      rawFields: ['payload'],
      responses: { 200: PreviewShape, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, input }) {
        return { status: 200, body: renderPreview(await previewEndpoint(endpoints, ctx, input)) };
      },
    }),
  ];
}
