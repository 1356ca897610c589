import { z } from 'zod';
import { SERVICE_VERSION } from '@svc/core';
import type { RouteSpec } from './route.js';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** Errors every authenticated route can answer, whatever it declares. */
const COMMON_ERRORS = [401, 403, 415, 400, 413, 429];

function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function jsonSchema(schema: z.ZodType): unknown {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' });
}

/** OpenAPI 3.1, generated from the route declarations. */
export function buildOpenApi(routes: readonly RouteSpec[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = toOpenApiPath(route.path);
    const parameters: unknown[] = [];
    for (const match of route.path.matchAll(/:([A-Za-z_]+)/g))
      parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
    if (route.query instanceof z.ZodObject) {
      for (const [name, schema] of Object.entries(route.query.shape as Record<string, z.ZodType>))
        parameters.push({ name, in: 'query', required: false, schema: jsonSchema(schema) });
    }
    if (route.idempotent)
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: true,
        schema: { type: 'string', minLength: 1, maxLength: 128 },
      });
    if (route.ifMatch) parameters.push({ name: 'If-Match', in: 'header', required: true, schema: { type: 'string' } });
    parameters.push({ name: 'Svc-Mode', in: 'header', required: false, schema: { type: 'string', enum: ['live'] } });
    const responses: Record<string, unknown> = {};
    const statuses = new Set([...Object.keys(route.responses).map(Number), ...COMMON_ERRORS]);
    for (const status of [...statuses].sort()) {
      const schema = route.responses[status];
      const description = STATUS_TEXT[status] ?? String(status);
      responses[String(status)] =
        schema === null
          ? { description }
          : {
              description,
              content: {
                'application/json': { schema: schema ? jsonSchema(schema) : { $ref: '#/components/schemas/Error' } },
              },
            };
    }
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      security: [{ bearer: [] }],
      parameters,
      ...(route.input
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.input) } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Webhook delivery and capture service', version: SERVICE_VERSION },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A secret key (svc_sk_...)' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                field: { type: 'string' },
                resource_id: { type: 'string' },
              },
            },
          },
        },
      },
    },
    paths,
  };
}
