import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '@svc/core';
import { sendError } from './errors.js';

/**
 * The methods each served path answers, to tell an undeclared method on a known path (405 method_not_allowed with
 * `Allow`) from an unknown path (404 not_found). Filled from Fastify's onRoute hook, HEAD routes included.
 */
export class AllowedMethods {
  private readonly paths = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(url: string, methods: readonly string[]): void {
    let entry = this.paths.get(url);
    if (!entry) {
      // A parameter (`:id`) is one path segment, as the router matches it.
      const source = url
        .split('/')
        .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      entry = { pattern: new RegExp(`^${source}$`), methods: new Set() };
      this.paths.set(url, entry);
    }
    for (const method of methods) entry.methods.add(method);
  }

  /** The methods the path (without its query) is served with, sorted; none for an unknown path. */
  of(path: string): string[] {
    const methods = new Set<string>();
    for (const { pattern, methods: served } of this.paths.values())
      if (pattern.test(path)) for (const method of served) methods.add(method);
    return [...methods].sort();
  }

  /** The answer of a request no route took: 405 with Allow when the path is served with other methods, else 404. */
  refuse(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const path = request.url.split('?')[0] ?? '';
    const methods = this.of(path);
    if (methods.length === 0) return sendError(request, reply, new ServiceError('not_found', 'no such route'));
    reply.header('Allow', methods.join(', '));
    return sendError(
      request,
      reply,
      new ServiceError(
        'method_not_allowed',
        'this route does not take this method; the Allow header lists those it takes',
      ),
    );
  }
}
