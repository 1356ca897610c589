import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUS, isServiceError, ServiceError } from '@svc/core';
import { newRequestId } from './request-id.js';

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
  // A path that cannot be decoded (`%zz`) or is longer than any ID names nothing, like an unknown ID.
  if (code === 'FST_ERR_BAD_URL' || code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new ServiceError('not_found', 'no such resource');
  // Bodies of /graphql (the REST routes read bytes and parse them in the pipeline).
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY') return new ServiceError('invalid_json', 'the body is not valid JSON');
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ServiceError('body_too_large', 'the request body is over 1 MiB');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ServiceError('unsupported_media_type', 'request bodies must be application/json');
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH')
    return new ServiceError('invalid_json', 'the body is not valid JSON');
  return null;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  // Set here too: answers of the router (frameworkErrors) do not pass the onSend hook of the routes.
  reply.header('Request-Id', request.id);
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

/** What Node's HTTP parser refuses before a request exists, in the API's terms. */
function clientErrorOf(error: NodeJS.ErrnoException): ServiceError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new ServiceError('request_timeout', 'the request did not arrive in time');
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return new ServiceError('headers_too_large', 'the request line and headers are over 16 KiB');
  return new ServiceError(
    'bad_request',
    'the request is not valid HTTP/1.1 (header names are tokens; header values hold no control characters)',
  );
}

/**
 * Answers a request Node's HTTP parser refused (Fastify's clientErrorHandler) with the API's error body and a
 * Request-Id, then closes the connection, as Node does.
 */
export function answerClientError(log: FastifyBaseLogger, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = clientErrorOf(error);
  const requestId = newRequestId();
  log.debug({ err: error, reqId: requestId }, 'client error');
  if (socket.writable) {
    const body = errorBody(known);
    const status = ERROR_STATUS[known.code];
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `Request-Id: ${requestId}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
