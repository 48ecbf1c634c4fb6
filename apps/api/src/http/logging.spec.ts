import { connect } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { ChronicleConfig } from '@chronicle/config';
import { edgeOptions, installEdge } from './edge';
import { logRequests } from './logging';

/** The edge and the request log on a bare Fastify: what every refusal writes. */
async function edgeWithLog() {
  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const config = {
    requestTimeoutSeconds: 30,
    trustProxy: false,
    corsOrigins: null,
  } as unknown as ChronicleConfig;
  const fastify = Fastify(edgeOptions(config, logger));
  logRequests(fastify, logger);
  await installEdge(fastify, config);
  fastify.get('/users/:id', () => ({ ok: true }));
  await fastify.ready();
  return { fastify, lines };
}

describe('request lines', () => {
  it.each([
    ['a route served', '/users/u-1', 200],
    ['bad percent-encoding', '/users/%ff?access_token=ct2.secret', 400],
    ['a path segment over 200 characters', `/users/${'x'.repeat(201)}`, 414],
    ['an unknown route', '/nowhere', 404],
  ])('writes one for %s', async (_case, url, status) => {
    const { fastify, lines } = await edgeWithLog();
    try {
      const response = await fastify.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(status);
      await new Promise((resolve) => setImmediate(resolve));
      const requests = lines.filter((line) => line.msg === 'request completed');
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ req: { method: 'GET' }, res: { statusCode: status } });
      expect(JSON.stringify(requests[0])).not.toContain('ct2.secret');
    } finally {
      await fastify.close();
    }
  });

  it("writes one for a request Node's parser refuses, with what could be read of it", async () => {
    const { fastify, lines } = await edgeWithLog();
    try {
      await fastify.listen({ port: 0, host: '127.0.0.1' });
      const { port } = fastify.server.address() as { port: number };
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const socket = connect(port, '127.0.0.1', () => socket.end('GET / HTTP/1.1\r\nBad Header\r\n\r\n'));
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400/);
      const requests = lines.filter((line) => line.msg === 'request completed');
      expect(requests).toEqual([
        expect.objectContaining({
          req: expect.objectContaining({ id: expect.any(String), method: null, client: '127.0.0.1' }),
          res: { statusCode: 400 },
        }),
      ]);
    } finally {
      await fastify.close();
    }
  });
});
