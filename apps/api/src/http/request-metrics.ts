import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ChronicleMetrics } from '@chronicle/metrics';

/** Label of requests no route matched: their paths are the client's to choose, so never a label. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Times every request at the edge, after its response is sent, by route template (never the
 * raw path, whose ids would make a series per user), method and status.
 */
export function measureRequests(fastify: FastifyInstance, metrics: ChronicleMetrics): void {
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    metrics.httpRequestDuration.observe(
      {
        route: request.routeOptions.url ?? UNMATCHED_ROUTE,
        method: request.method,
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
