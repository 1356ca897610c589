import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isServiceError, ServiceError } from '@svc/core';

export function errorBody(error: ServiceError): string {
  return JSON.stringify({
    error: {
      code: error.code,
      message: error.message,
      ...(error.details.field !== undefined ? { field: error.details.field } : {}),
      ...(error.details.resourceId !== undefined ? { resource_id: error.details.resourceId } : {}),
    },
  });
}

/** Maps framework errors (body size, content type) to the documented codes; anything unknown is an opaque 500. */
export function toServiceError(error: unknown): ServiceError | null {
  if (isServiceError(error)) return error;
  const code = (error as FastifyError | undefined)?.code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ServiceError('body_too_large', 'the request body is over 1 MiB');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ServiceError('unsupported_media_type', 'request bodies must be application/json');
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH')
    return new ServiceError('invalid_json', 'the body is not valid JSON');
  return null;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const known = toServiceError(error);
  if (!known) {
    request.log.error({ err: error }, 'unhandled error');
    return reply
      .code(500)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify({ error: { code: 'internal_error', message: 'internal error' } }));
  }
  // A 5xx is the service's fault (a sealing failure, an unreachable dependency): it is logged with its cause even
  // though the client gets a documented code.
  if (known.status >= 500) request.log.error({ err: known, code: known.code }, 'request failed');
  if (known.details.retryAfter !== undefined) reply.header('Retry-After', String(known.details.retryAfter));
  if (known.details.etag !== undefined) reply.header('ETag', known.details.etag);
  return reply.code(known.status).type('application/json; charset=utf-8').send(errorBody(known));
}
