import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Span, startServerSpan, tracingStarted } from '@chronicle/tracing';

/**
 * With tracing on, a server span per request, continuing the caller's `traceparent`: everything
 * the request does (commands, appends) runs inside it. With tracing off, no hook at all.
 */
export function traceRequests(fastify: FastifyInstance): void {
  if (!tracingStarted()) return;
  const spans = new WeakMap<FastifyRequest, Span>();
  fastify.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    // The rest of the request's hooks and its handler run from done(), so in the span's context.
    startServerSpan(request.method, request.headers, (span) => spans.set(request, span), done);
  });
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const span = spans.get(request);
    if (span !== undefined) {
      const route = request.routeOptions.url;
      if (route !== undefined) span.updateName(`${request.method} ${route}`);
      span.setAttributes({
        'http.route': route ?? 'unmatched',
        'http.response.status_code': reply.statusCode,
      });
      if (reply.statusCode >= 500) span.setStatus({ code: 2 });
      span.end();
    }
    done();
  });
}
