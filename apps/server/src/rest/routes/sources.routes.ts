import { z } from 'zod';
import {
  CreateSourceInput,
  ListSourcesQuery,
  parseInput,
  receiveUrl,
  RotateSourceSecretInput,
  RotateSourceTokenInput,
  UpdateSourceInput,
  VERIFICATION_KINDS,
  type Actor,
  type Services,
  type SourceView,
  type SourceWithSecrets,
} from '@svc/core';
import {
  defineRoute,
  defineUnauthenticatedRoute,
  type RouteResult,
  type RouteSpec,
  type UnauthenticatedRouteSpec,
} from '../route.js';
import {
  createdAt,
  ErrorShape,
  listOf,
  metadataField,
  queryOf,
  timestamp,
  updatedAt,
  versionField,
} from '../shapes.js';

export const SourceShape = z
  .strictObject({
    id: z.string().startsWith('wds_'),
    tenant_id: z.string().startsWith('wdt_'),
    name: z.string(),
    verification: z
      .looseObject({ kind: z.enum(VERIFICATION_KINDS) })
      .describe('The verifier kind and its settings (docs/sources.md); the secret is write-only'),
    event_type: z.string().nullable().describe('The event type of every capture, or null when event_type_path maps it'),
    event_type_path: z
      .string()
      .nullable()
      .describe('A JSON Pointer into the captured body (or a form field) naming the event type'),
    event_type_prefix: z.string().nullable().describe('Put before the value at event_type_path'),
    billing_key_id: z.string().describe('The secret key captures are charged to'),
    status: z
      .enum(['active', 'paused'])
      .describe('A paused source answers 503 with Retry-After, so providers send again later'),
    secret_rotation_ends_at: timestamp.nullable().describe('While a rotated-out secret still verifies: when that ends'),
    token_rotation_ends_at: timestamp
      .nullable()
      .describe('While a rotated-out receive URL still answers: when that ends'),
    secret_version: z.number().int().min(1),
    token_version: z.number().int().min(1),
    metadata: metadataField,
    version: versionField,
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .meta({ id: 'Source', description: "A public receive URL that verifies and captures another provider's webhooks" });

const SourceWithSecretsShape = SourceShape.extend({
  receive_url: z.string().optional().describe('Shown on create and rotate_token only: the URL to give the provider'),
  secret: z
    .string()
    .optional()
    .describe('A generated secret (standard_webhooks, bearer), shown on create and rotate_secret only'),
}).meta({ id: 'SourceWithSecrets' });

const SourceListShape = listOf(SourceShape, 'SourceList');

function renderSource(view: SourceView): z.infer<typeof SourceShape> {
  const { etag: _etag, ...body } = view;
  return body as z.infer<typeof SourceShape>;
}

export function sourceRoutes(services: Services, publicBaseUrl: string): RouteSpec[] {
  const { sources } = services;
  const withEtag = (view: SourceView) => ({ ETag: view.etag });
  const withSecrets = (result: SourceWithSecrets) => ({
    ...renderSource(result.source),
    ...(result.token === null ? {} : { receive_url: receiveUrl(publicBaseUrl, result.token) }),
    ...(result.secret === null ? {} : { secret: result.secret }),
  });
  /** Idempotency records never hold the receive URL or a secret. */
  const withoutSecrets = (result: RouteResult) => {
    const { receive_url: _url, secret: _secret, ...rest } = result.body as { receive_url?: string; secret?: string };
    return rest;
  };
  /** A replay shows them again only to the key that made them, and only while they are current. */
  const replayWithSecrets =
    (shown: { token: boolean; secret: boolean }) =>
    async (stored: Buffer, replay: { actor: Actor; sameKey: boolean }): Promise<Buffer> => {
      if (!replay.sameKey) return stored;
      const body = JSON.parse(stored.toString('utf8')) as { id: string; token_version: number; secret_version: number };
      const current = await sources.currentSecretsMadeBy({ actor: replay.actor }, body.id, {
        ...(shown.token ? { token: body.token_version } : {}),
        ...(shown.secret ? { secret: body.secret_version } : {}),
      });
      return Buffer.from(
        JSON.stringify({
          ...body,
          ...(current.token === null ? {} : { receive_url: receiveUrl(publicBaseUrl, current.token) }),
          ...(current.secret === null ? {} : { secret: current.secret }),
        }),
        'utf8',
      );
    };

  return [
    defineRoute({
      operationId: 'createSource',
      summary: "Create a source: a receive URL (shown once) that verifies and captures a provider's webhooks",
      method: 'POST',
      path: '/sources',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreateSourceInput,
      responses: { 201: SourceWithSecretsShape, 409: ErrorShape, 422: ErrorShape, 503: ErrorShape },
      async handler({ ctx, input }) {
        const created = await sources.createSource(ctx, input);
        return { status: 201, body: withSecrets(created), headers: withEtag(created.source) };
      },
      storedBody: withoutSecrets,
      replayBody: replayWithSecrets({ token: true, secret: true }),
    }),
    defineRoute({
      operationId: 'listSources',
      summary: 'List sources (deleted ones excluded), oldest first',
      method: 'GET',
      path: '/sources',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListSourcesQuery, { tenant_id: "Only this tenant's sources" }),
      responses: { 200: SourceListShape, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await sources.listSources(ctx, parseInput(ListSourcesQuery, query));
        return { status: 200, body: { data: page.data.map(renderSource), next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getSource',
      summary: 'Read a source (never its secret or receive URL)',
      method: 'GET',
      path: '/sources/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: SourceShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        const view = await sources.getSource(ctx, params['id']!);
        return { status: 200, body: renderSource(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'updateSource',
      summary: 'Change a source: name, verification settings, event type mapping, billing key, status, metadata',
      method: 'PATCH',
      path: '/sources/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      input: UpdateSourceInput,
      responses: { 200: SourceShape, 404: ErrorShape, 412: ErrorShape, 422: ErrorShape, 428: ErrorShape },
      async handler({ ctx, params, ifMatch, input }) {
        const view = await sources.updateSource(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: renderSource(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'deleteSource',
      summary: 'Delete a source: its receive URL stops answering at once',
      method: 'DELETE',
      path: '/sources/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      responses: { 204: null, 404: ErrorShape, 412: ErrorShape, 428: ErrorShape },
      async handler({ ctx, params, ifMatch }) {
        await sources.deleteSource(ctx, params['id']!, ifMatch);
        return { status: 204 };
      },
    }),
    defineRoute({
      operationId: 'rotateSourceSecret',
      summary: 'Rotate the verification secret; the old one keeps verifying during the overlap',
      method: 'POST',
      path: '/sources/:id/rotate_secret',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      ifMatch: true,
      input: RotateSourceSecretInput,
      responses: {
        200: SourceWithSecretsShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, input }) {
        const rotated = await sources.rotateSecret(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: withSecrets(rotated), headers: withEtag(rotated.source) };
      },
      storedBody: withoutSecrets,
      replayBody: replayWithSecrets({ token: false, secret: true }),
    }),
    defineRoute({
      operationId: 'rotateSourceToken',
      summary: 'Rotate the receive URL (the new one is shown once); the old one keeps answering during the overlap',
      method: 'POST',
      path: '/sources/:id/rotate_token',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      ifMatch: true,
      input: RotateSourceTokenInput,
      responses: {
        200: SourceWithSecretsShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, input }) {
        const rotated = await sources.rotateToken(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: withSecrets(rotated), headers: withEtag(rotated.source) };
      },
      storedBody: withoutSecrets,
      replayBody: replayWithSecrets({ token: true, secret: false }),
    }),
  ];
}

/** POST /receive/{token}: what providers call; the source's verifier authenticates it (docs/sources.md). */
export function receiveRoute(services: Services, publicBaseUrl: string): UnauthenticatedRouteSpec {
  const { receive } = services;
  return defineUnauthenticatedRoute({
    operationId: 'receive',
    summary: "A provider's webhook: verified by the source's kind, deduplicated and captured as a message",
    method: 'POST',
    path: '/receive/:token',
    auth: 'source_signature',
    rateClass: 'none',
    responses: {
      200: null,
      401: ErrorShape,
      402: ErrorShape,
      404: ErrorShape,
      413: ErrorShape,
      415: ErrorShape,
      422: ErrorShape,
      429: ErrorShape,
      503: ErrorShape,
    },
    async handler(request) {
      const answer = await receive.receive({
        token: request.params['token'] ?? '',
        rawBody: request.rawBody,
        rawHeaders: request.rawHeaders,
        publicUrl: `${publicBaseUrl.replace(/\/+$/, '')}${request.url}`,
        contentType: firstHeader(request.headers['content-type']),
      });
      return { status: answer.status, raw: Buffer.from(answer.body, 'utf8'), contentType: answer.contentType };
    },
  });
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
