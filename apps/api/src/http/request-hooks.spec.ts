import Fastify from 'fastify';
import { ChronicleMetrics } from '@chronicle/metrics';
import { recordSpans } from '@chronicle/tracing/testing';
import { measureRequests, UNMATCHED_ROUTE } from './request-metrics';
import { traceRequests } from './request-tracing';

/** A bare Fastify with a route that answers `?status=` (200 by default), after `install`. */
async function server(install: (fastify: ReturnType<typeof Fastify>) => void) {
  const fastify = Fastify();
  install(fastify);
  fastify.get('/users/:id', async (request, reply) => {
    const status = Number((request.query as { status?: string }).status ?? 200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    return reply.code(status).send({});
  });
  await fastify.ready();
  return fastify;
}

describe('measureRequests', () => {
  it('observes each request by route template, method and status, in seconds', async () => {
    const metrics = new ChronicleMetrics();
    const fastify = await server((instance) => measureRequests(instance, metrics));
    try {
      await fastify.inject({ method: 'GET', url: '/users/u-1' });
      await fastify.inject({ method: 'GET', url: '/users/u-2?status=503' });
      await fastify.inject({ method: 'DELETE', url: '/somewhere/u-3' });
      const { values } = await metrics.httpRequestDuration.get();
      const counts = values.filter(
        (value) => value.metricName === 'http_server_request_duration_seconds_count',
      );
      expect(counts.map(({ labels, value }) => ({ ...labels, value }))).toEqual([
        { route: '/users/:id', method: 'GET', status: '200', value: 1 },
        { route: '/users/:id', method: 'GET', status: '503', value: 1 },
        { route: UNMATCHED_ROUTE, method: 'DELETE', status: '404', value: 1 },
      ]);
      // Seconds: the route waits 20 ms, and the whole exchange takes less than a second.
      const sum = values.find(
        (value) =>
          value.metricName === 'http_server_request_duration_seconds_sum' && value.labels.status === '200',
      );
      expect(sum?.value).toBeGreaterThanOrEqual(0.015);
      expect(sum?.value).toBeLessThan(1);
    } finally {
      await fastify.close();
    }
  });
});

describe('traceRequests', () => {
  it('adds no hook while tracing is off', async () => {
    const fastify = Fastify();
    const hooks = jest.spyOn(fastify, 'addHook');
    traceRequests(fastify);
    expect(hooks).not.toHaveBeenCalled();
    await fastify.close();
  });

  describe('with tracing on', () => {
    const exporter = recordSpans();

    it('makes a server span per request, named by its route, with its status; a 5xx is an error', async () => {
      const fastify = await server(traceRequests);
      try {
        const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
        await fastify.inject({
          method: 'GET',
          url: '/users/u-1',
          headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        });
        await fastify.inject({ method: 'GET', url: '/users/u-2?status=500' });
        await fastify.inject({ method: 'GET', url: '/users/u-3?status=499' });
        await fastify.inject({ method: 'POST', url: '/nowhere' });
        const spans = exporter.getFinishedSpans();
        expect(
          spans.map((span) => ({ name: span.name, attributes: span.attributes, status: span.status.code })),
        ).toEqual([
          {
            name: 'GET /users/:id',
            attributes: expect.objectContaining({
              'http.route': '/users/:id',
              'http.response.status_code': 200,
            }),
            status: 0,
          },
          {
            name: 'GET /users/:id',
            attributes: expect.objectContaining({
              'http.route': '/users/:id',
              'http.response.status_code': 500,
            }),
            status: 2,
          },
          {
            name: 'GET /users/:id',
            attributes: expect.objectContaining({ 'http.response.status_code': 499 }),
            status: 0,
          },
          {
            name: 'POST',
            attributes: expect.objectContaining({
              'http.route': 'unmatched',
              'http.response.status_code': 404,
            }),
            status: 0,
          },
        ]);
        // The caller's trace continues.
        expect(spans[0].spanContext().traceId).toBe(traceId);
      } finally {
        await fastify.close();
      }
    });
  });
});
