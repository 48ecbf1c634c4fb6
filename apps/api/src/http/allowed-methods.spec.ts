import Fastify, { type FastifyInstance } from 'fastify';
import { AllowedMethods } from './allowed-methods';

/** A Fastify app whose unmatched requests and OPTIONS go through AllowedMethods, as the edge wires it. */
async function appWith(register: (fastify: FastifyInstance) => void) {
  const fastify = Fastify();
  const allowed = new AllowedMethods(fastify);
  // What answered was AllowedMethods alone: neither a route nor the 404 went on to run.
  fastify.setNotFoundHandler((_request, reply) => {
    if (!reply.sent) void reply.status(404).send({ notFound: true });
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS' && allowed.answerOptions(request, reply)) return;
    if (request.is404 && allowed.answerUnoffered(request, reply)) return;
    done();
  });
  register(fastify);
  await fastify.ready();
  return { fastify, allowed };
}

describe('AllowedMethods', () => {
  let fastify: FastifyInstance;
  let allowed: AllowedMethods;
  let optionsRouted = 0;

  beforeAll(async () => {
    ({ fastify, allowed } = await appWith((app) => {
      app.get('/users', async () => []);
      app.post('/users', async () => ({}));
      app.route({ method: ['GET', 'PATCH'], url: '/users/:id', handler: async () => ({}) });
      app.options('/users/:id', async () => {
        optionsRouted++;
        return 'never: AllowedMethods answers OPTIONS';
      });
      app.delete('/sessions/:id', async () => ({}));
    }));
  });
  afterAll(() => fastify.close());

  it('lists the methods a path offers in the order first registered, OPTIONS last', () => {
    expect(allowed.of('/users')).toEqual(['GET', 'HEAD', 'POST', 'OPTIONS']);
    expect(allowed.of('/users/42')).toEqual(['GET', 'HEAD', 'PATCH', 'OPTIONS']);
    expect(allowed.of('/sessions/7')).toEqual(['DELETE', 'OPTIONS']);
  });

  it('offers nothing, not even OPTIONS, on a path no route has', () => {
    expect(allowed.of('/nowhere')).toEqual([]);
    expect(allowed.of('/sessions')).toEqual([]);
  });

  it('answers OPTIONS on a known path with 204 and Allow', async () => {
    const response = await fastify.inject({ method: 'OPTIONS', url: '/users/42' });
    expect(response.statusCode).toBe(204);
    expect(response.headers.allow).toBe('GET, HEAD, PATCH, OPTIONS');
    expect(response.body).toBe('');
    expect(optionsRouted).toBe(0);
  });

  it('answers a method a known path does not offer with a 405 problem and Allow', async () => {
    const response = await fastify.inject({ method: 'PUT', url: '/users/42' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, PATCH, OPTIONS');
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json\b/);
    expect(response.json()).toMatchObject({
      type: 'method-not-allowed',
      title: 'Method Not Allowed',
      status: 405,
      detail: 'This resource does not offer PUT; it offers GET, HEAD, PATCH, OPTIONS.',
    });
    expect(response.json()).not.toHaveProperty('notFound');
  });

  it('leaves an unknown path to the 404, whatever the method', async () => {
    for (const method of ['GET', 'OPTIONS', 'PUT'] as const) {
      const response = await fastify.inject({ method, url: '/nowhere' });
      expect(response.statusCode).toBe(404);
      expect(response.headers.allow).toBeUndefined();
    }
  });

  it('learns the methods of a route added after it was made, with none of its own list', async () => {
    const later = await appWith((app) => app.put('/late', async () => ({})));
    expect(later.allowed.of('/late')).toEqual(['PUT', 'OPTIONS']);
    await later.fastify.close();
  });
});
