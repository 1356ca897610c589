import { z } from 'zod';
import { IDEMPOTENCY_KEY_PATTERN, SERVICE_VERSION, STRONG_ETAG } from '@svc/core';
import { exampleOf } from './openapi-examples.js';
import { pathParameter } from './openapi-parameters.js';
import { referToRule, RULE_COMPONENTS } from './openapi-rules.js';
import {
  documentedStatuses,
  errorExamples,
  STATUS_TEXT,
  statusDescription,
  unauthenticatedStatuses,
} from './openapi-statuses.js';
import type { RouteSpec, UnauthenticatedRouteSpec } from './route.js';
import { documentedPath, etagSource } from './routes/discovery.js';
import { ErrorShape } from './shapes.js';

/** Operations are grouped by the first segment of their path. */
const TAGS: readonly { name: string; segments: readonly string[]; description: string }[] = [
  { name: 'Tenants', segments: ['tenants'], description: 'Your customers: endpoints and messages belong to a tenant' },
  { name: 'Event types', segments: ['event_types'], description: 'The catalog of event types messages may carry' },
  {
    name: 'Endpoints',
    segments: ['endpoints', 'previews'],
    description: "Tenants' receivers: URLs, signing secrets, filters, transforms and delivery settings",
  },
  { name: 'Messages', segments: ['messages'], description: 'Events sent to tenants, their content and deliveries' },
  {
    name: 'Sources',
    segments: ['sources', 'receive'],
    description: "Receive URLs that verify, deduplicate and capture other providers' webhooks",
  },
  {
    name: 'Deliveries',
    segments: ['deliveries'],
    description: 'One message to one endpoint per generation, its attempts, dead letters, retry now and replay',
  },
  { name: 'Settings', segments: ['settings'], description: 'Retention and response body logging for the team' },
  {
    name: 'Catalog',
    segments: ['capabilities', 'rates'],
    description: 'What the service supports, its limits and rates',
  },
];

/** A path outside TAGS gets a tag named after its first segment (`dead_letters` -> `Dead letters`). */
function tagOf(route: RouteSpec): { name: string; description?: string } {
  const segment = route.path.split('/')[1] ?? '';
  const known = TAGS.find((tag) => tag.segments.includes(segment));
  if (known) return known;
  const words = segment.replace(/_/g, ' ');
  return { name: words.charAt(0).toUpperCase() + words.slice(1) };
}

const COMPONENT_REF = '#/components/schemas/';

/**
 * Descriptions of request and response fields by name, for fields whose schema has none of its own (the request
 * schemas are the shared ones in packages/core, which carry no API prose).
 */
const FIELD_DESCRIPTIONS: Record<string, string> = {
  'CreateEventTypeRequest.name':
    'Lowercase words (a-z, 0-9, _) separated by dots, e.g. invoice.paid; webhooks. and svc. are reserved',
  external_id: 'Your ID for the tenant: 1 to 128 letters, digits, _ . : -; unique in the team',
  name: 'A display name (1 to 128 UTF-8 bytes)',
  metadata: 'Your key/value pairs (string values, at most 50 keys); replaced in full on update',
  description: 'Free text (at most maxLength UTF-8 bytes)',
  'CreateMessageRequest.tenant_id': 'The tenant the message is for',
  'CreateMessageRequest.payload':
    'The payload (any JSON value, null included), delivered as written minus whitespace outside strings; send it or body_base64',
  'CreateMessageRequest.body_base64': 'The body as standard padded Base64 (at most 1 MiB decoded), with content_type',
  'CreateMessageRequest.event_type': 'An active event type of the catalog',
  example: 'An example payload (any JSON value, at most 16 KiB), kept exactly as written; null clears it',
  archived: 'Only false is accepted (unarchive); DELETE archives',
  tenant_id: 'The tenant the endpoint receives messages for',
  url: 'The receiver URL: HTTPS on a public host',
  events: 'Event type patterns: exact names, `<prefix>.*` or `*` (default ["*"])',
  filter: 'A filter on the payload (JSON object) or null; kept exactly as written',
  transform: 'A transform of the payload (JSON object) or null; kept exactly as written',
  status: 'enabled or paused',
  rate_per_second: 'At most this many attempts per second (1 to 1000, default 50)',
  max_concurrency: 'At most this many attempts in flight (1 to 3)',
  retry_delays_seconds: 'Seconds before each retry (at most 8 delays, 259,200 seconds in all)',
  timeout_seconds: 'How long an attempt may take (1 to 30, default 10)',
  headers: 'Custom headers sent with each delivery (name to value; values are write-only)',
  authorization: 'An Authorization header value sent with each delivery (write-only), or null',
  overlap_seconds: 'How long old secrets keep signing (0 to 86,400; default 86,400; 0 retires them at once)',
  endpoint_id: 'The endpoint to evaluate',
  payload: 'The payload to evaluate (any JSON value)',
  event_type: 'An event type name to match against the endpoint’s patterns',
  payload_retention_days: 'Days message bodies are kept (1 to 30)',
  response_body_logging: "Whether receivers' response bodies are kept",
  response_retention_days: 'Days response bodies are kept (1 to 7)',
};

/**
 * zod emits `format: starts_with` for startsWith(); it is not an OpenAPI format (the pattern says the same). A filter
 * or transform field refers to its component (openapi-rules.ts).
 */
function adjustSchema(ctx: { jsonSchema: Record<string, unknown> }): void {
  if (ctx.jsonSchema['format'] === 'starts_with') delete ctx.jsonSchema['format'];
  referToRule(ctx);
}

function describeFields(component: string, schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const properties = (schema as JsonObject)['properties'] as Record<string, JsonObject> | undefined;
  for (const [name, property] of Object.entries(properties ?? {})) {
    const description = FIELD_DESCRIPTIONS[`${component}.${name}`] ?? FIELD_DESCRIPTIONS[name];
    if (property['description'] === undefined && description !== undefined)
      properties![name] = { ...property, description };
  }
  return schema;
}

type JsonObject = Record<string, unknown>;

/** `#/$defs/X` (zod's local definitions) becomes `#/components/schemas/X`. */
function toComponentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toComponentRefs);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === '$ref' && typeof item === 'string' ? item.replace('#/$defs/', COMPONENT_REF) : toComponentRefs(item),
    ]),
  );
}

/**
 * Converts many schemas in one pass, so a shape named with `.meta({ id })` is emitted once as a component and
 * referenced wherever it is used.
 */
function convertAll(
  schemas: readonly z.ZodType[],
  io: 'input' | 'output',
  components: Record<string, unknown>,
): unknown[] {
  if (schemas.length === 0) return [];
  const holder = z.strictObject(Object.fromEntries(schemas.map((schema, i) => [`s${i}`, schema])));
  const json = z.toJSONSchema(holder, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: adjustSchema,
  }) as JsonObject;
  const defs = (json['$defs'] ?? {}) as Record<string, unknown>;
  for (const [name, def] of Object.entries(defs)) {
    const converted = describeFields(name, toComponentRefs(def));
    if (name in components && JSON.stringify(components[name]) !== JSON.stringify(converted))
      throw new Error(`two different schemas are named ${name}`);
    components[name] = converted;
  }
  const properties = json['properties'] as Record<string, unknown>;
  return schemas.map((_schema, i) => toComponentRefs(properties[`s${i}`]));
}

function pascalCase(operationId: string): string {
  return operationId.charAt(0).toUpperCase() + operationId.slice(1);
}

/** A query parameter: its description moves from the schema to the parameter. */
function queryParameter(name: string, schema: z.ZodType): JsonObject {
  const {
    $schema: _dialect,
    description,
    ...json
  } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: adjustSchema,
  }) as JsonObject;
  return {
    name,
    in: 'query',
    required: !schema.safeParse(undefined).success,
    ...(description === undefined ? {} : { description }),
    schema: json,
  };
}

/** The tags of the operations, in TAGS order, then any others. */
function usedTags(routes: readonly RouteSpec[]): { name: string; description?: string }[] {
  const byName = new Map(routes.map((route) => tagOf(route)).map((tag) => [tag.name, tag] as const));
  const ordered = TAGS.filter((tag) => byName.has(tag.name)).map(({ name, description }) => ({ name, description }));
  const others = [...byName.values()].filter((tag) => !TAGS.some((known) => known.name === tag.name));
  return [...ordered, ...others.map(({ name }) => ({ name }))];
}

/** OpenAPI 3.1, generated from the route declarations; named shapes become components. */
export function buildOpenApi(
  routes: readonly RouteSpec[],
  serverUrl: string,
  unauthenticated: readonly UnauthenticatedRouteSpec[] = [],
): Record<string, unknown> {
  const components: Record<string, unknown> = { ...RULE_COMPONENTS };
  const responseSchemas = [...new Set(routes.flatMap((route) => Object.values(route.responses)))].filter(
    (schema): schema is z.ZodType => schema !== null,
  );
  const responseJson = new Map(
    convertAll([ErrorShape, ...responseSchemas], 'output', components).map(
      (json, i) => [i === 0 ? ErrorShape : responseSchemas[i - 1]!, json] as const,
    ),
  );
  const requestRoutes = routes.filter((route) => route.input !== undefined);
  const requestJson = convertAll(
    requestRoutes.map((route) => route.input!),
    'input',
    components,
  );
  // Request bodies are named after their operation (CreateTenantRequest), so clients get a type for each.
  const requestRefs = new Map<RouteSpec, JsonObject>();
  requestRoutes.forEach((route, i) => {
    const name = `${pascalCase(route.operationId)}Request`;
    components[name] = describeFields(name, requestJson[i]);
    requestRefs.set(route, { $ref: `${COMPONENT_REF}${name}` });
  });

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = documentedPath(route.path);
    const parameters: unknown[] = [];
    for (const match of route.path.matchAll(/:([A-Za-z_]+)/g)) parameters.push(pathParameter(route.path, match[1]!));
    if (route.query instanceof z.ZodObject) {
      for (const [name, schema] of Object.entries(route.query.shape as Record<string, z.ZodType>))
        parameters.push(queryParameter(name, schema));
    }
    if (route.idempotent)
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: true,
        description:
          'Your unique key for this request (1 to 128 printable ASCII characters); a retry with the same key and request returns the first response',
        schema: { type: 'string', minLength: 1, maxLength: 128, pattern: IDEMPOTENCY_KEY_PATTERN.source },
        example: 'order-1234-create',
      });
    if (route.ifMatch)
      parameters.push({
        name: 'If-Match',
        in: 'header',
        required: route.ifMatch === true,
        description:
          route.ifMatch === true
            ? `The ETag header from ${etagSource('', route.path)} (or from the response that last changed the resource)`
            : `Optional: the ETag header from ${etagSource('', route.path)}; when sent, the request applies only to that version (for PUT of an existing flag it is required)`,
        schema: { type: 'string', pattern: STRONG_ETAG.source },
        example: '"wd:wdt_01jd8x9m2k3n4p5q6r7s8t9v0w:3"',
      });
    parameters.push({
      name: 'Svc-Mode',
      in: 'header',
      required: false,
      description: 'Omit or send live; test mode is not supported',
      schema: { type: 'string', enum: ['live'] },
    });
    const responses: Record<string, unknown> = {};
    for (const [status, codes] of documentedStatuses(route)) {
      const schema = route.responses[status];
      const description = statusDescription(status, codes);
      const json = responseJson.get(schema ?? ErrorShape);
      responses[String(status)] = route.rawResponses?.includes(status)
        ? { description, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } }
        : schema === null
          ? { description }
          : {
              description,
              content: {
                'application/json':
                  status < 400
                    ? { schema: json, example: exampleOf(json, components, 'output') }
                    : { schema: json, examples: errorExamples(status, codes) },
              },
            };
    }
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [tagOf(route).name],
      security: [{ bearer: [] }],
      parameters,
      ...(route.input
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: requestRefs.get(route),
                  example: exampleOf(requestRefs.get(route), components, 'input'),
                },
              },
            },
          }
        : {}),
      responses,
    };
  }
  // A stream endpoint's routes document their JSON bodies like the keyed routes do.
  const streamInputs = unauthenticated.filter((route) => route.input !== undefined);
  convertAll(
    streamInputs.map((route) => route.input!),
    'input',
    components,
  ).forEach((json, i) => {
    components[`${pascalCase(streamInputs[i]!.operationId)}Request`] = json;
  });
  // Routes a provider's signature or a stream token authenticates: no key, the body as the client sends it.
  for (const route of unauthenticated) {
    const responses: Record<string, unknown> = {};
    for (const status of unauthenticatedStatuses(route)) {
      const schema =
        status >= 500 || status === 422 ? (route.responses[status] ?? ErrorShape) : route.responses[status];
      const description = STATUS_TEXT[status] ?? String(status);
      responses[String(status)] = route.eventStreams?.includes(status)
        ? { description, content: { 'text/event-stream': { schema: { type: 'string' } } } }
        : schema === null || schema === undefined
          ? { description, content: { '*/*': { schema: { type: 'string' } } } }
          : {
              description,
              content: { 'application/json': { schema: responseJson.get(schema) ?? responseJson.get(ErrorShape) } },
            };
    }
    paths[documentedPath(route.path)] ??= {};
    if (route.auth === 'stream_token') {
      paths[documentedPath(route.path)]![route.method.toLowerCase()] = {
        operationId: route.operationId,
        summary: route.summary,
        tags: ['Endpoints'],
        security: [{ streamToken: [] }],
        parameters: [pathParameter(route.path, 'id')],
        ...(route.input
          ? {
              requestBody: {
                required: true,
                content: {
                  'application/json': {
                    schema: { $ref: `${COMPONENT_REF}${pascalCase(route.operationId)}Request` },
                  },
                },
              },
            }
          : {}),
        responses,
      };
      continue;
    }
    paths[documentedPath(route.path)]![route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [{ source_signature: 'Sources', public: 'Discovery' }[route.auth]],
      security: [],
      parameters: [
        {
          name: 'token',
          in: 'path',
          required: true,
          description: 'The secret part of the receive URL; any other answers 404',
          schema: { type: 'string', pattern: '^rcv_[A-Za-z0-9_-]{43}$' },
          example: 'rcv_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwYz4ypTB7J0k',
        },
      ],
      requestBody: {
        required: false,
        content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
      },
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Webhook delivery and capture service',
      version: SERVICE_VERSION,
      description:
        'Every route takes a secret key as `Authorization: Bearer <key>`, except POST /receive/{token}, which ' +
        "the source's verifier authenticates, and a stream endpoint's stream and acknowledgements, which take its " +
        'stream token (whst_...).',
    },
    servers: [{ url: serverUrl }],
    tags: usedTags(routes),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A secret key (svc_sk_...)' },
        ...(unauthenticated.some((route) => route.auth === 'stream_token')
          ? {
              streamToken: {
                type: 'http',
                scheme: 'bearer',
                description: "A stream endpoint's token (whst_...): its stream and acknowledgements only",
              },
            }
          : {}),
      },
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
    },
    paths,
  };
}
