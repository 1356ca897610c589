import { context, propagation, ROOT_CONTEXT, SpanKind, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ATTR, markFailed, tracer } from '@svc/core';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span and the context it is active in (the API's no-ops when tracing is off). */
    tracing?: { span: Span; context: Context };
  }
}

/**
 * A server span for every request, REST and GraphQL alike, continuing an incoming W3C `traceparent` (the propagator
 * the SDK registers; none when tracing is off). Its name and attributes hold the route's template, never the path
 * (the receive route's path is a secret token), the query, a header or the body. Each route's handler runs inside
 * the span's context, so what the handler calls (admission) starts its spans as children of it: Fastify's body
 * parsing breaks the async context between the hooks and the handler, so the handler is wrapped at registration.
 *
 * Call before any route is registered.
 */
export function traceRequests(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const handler = route.handler;
    route.handler = function tracedHandler(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const tracing = request.tracing;
      return tracing
        ? context.with(tracing.context, handler, this, request, reply)
        : handler.call(this, request, reply);
    };
  });
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url;
    const span = tracer().startSpan(
      route ? `${request.method} ${route}` : request.method,
      { kind: SpanKind.SERVER },
      parent,
    );
    if (span.isRecording()) {
      span.setAttributes({ 'http.request.method': request.method, [ATTR.requestId]: request.id });
      if (route) span.setAttribute('http.route', route);
    }
    request.tracing = { span, context: trace.setSpan(parent, span) };
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = request.tracing?.span;
    if (span) {
      if (span.isRecording()) {
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) markFailed(span, String(reply.statusCode));
      }
      span.end();
    }
    done();
  });
}
