import { connect } from 'node:net';
import Fastify from 'fastify';
import { ChronicleConfig } from '@chronicle/config';
import { eventually } from '../../../../test/e2e/support/eventually';
import { edgeOptions, installEdge } from './edge';
import {
  loggerModuleParams,
  loggerOptions,
  logLifecycle,
  logRequests,
  logUnparsedRequest,
  redactUrl,
  startupLogger,
} from './logging';
import { recordingLogger } from './recording-logger.spec-helper';

/** Pino writes through a stream: its lines are in once the current turn is over. */
const written = () => new Promise((resolve) => setImmediate(resolve));

/** Long enough for two of the lifecycle's polls (every 100 ms): for what must not happen. */
const twoPolls = () => new Promise((resolve) => setTimeout(resolve, 250));

/** The edge and the request log on a bare Fastify: what every refusal writes. */
async function edgeWithLog() {
  const { logger, lines } = recordingLogger();
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

describe('loggerOptions', () => {
  it('writes from the configured level up, and never a header, a password, its hash or a token', async () => {
    const config = Object.assign(new ChronicleConfig(), { logLevel: 'info' });
    const { logger, lines } = recordingLogger('info', loggerOptions(config));
    const secrets = { password: 'p', passwordHash: 'h', token: 't', access_token: 'a', name: 'kept' };
    logger.debug('below the level');
    logger.info(
      {
        req: { headers: { authorization: 'Basic c2VjcmV0' }, url: '/x' },
        res: { headers: { a: 'b' } },
        secrets,
      },
      'line',
    );
    await written();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'line',
      req: { headers: '[redacted]', url: '/x' },
      res: { headers: '[redacted]' },
      secrets: {
        password: '[redacted]',
        passwordHash: '[redacted]',
        token: '[redacted]',
        access_token: '[redacted]',
        name: 'kept',
      },
    });
  });
});

describe('redactUrl', () => {
  it('leaves a URL without a query as it is', () => {
    expect(redactUrl('/users/u-1')).toBe('/users/u-1');
  });

  it('replaces the values of access_token and token, whatever their case or spelling, and keeps the rest', () => {
    expect(redactUrl('/users?page=2&access_token=ct2.secret&TOKEN=abc&access%5Ftoken=x&flag')).toBe(
      '/users?page=2&access_token=[redacted]&TOKEN=[redacted]&access%5Ftoken=[redacted]&flag',
    );
    expect(redactUrl('/reset?token')).toBe('/reset?token=[redacted]');
    // A query string alone, as well.
    expect(redactUrl('?token=x')).toBe('?token=[redacted]');
  });

  it('reads a name as the query parser does: + is a space, and bad percent-encoding is the raw name', () => {
    expect(redactUrl('/x?to+ken=1&%E0%A4%A=2&a=token')).toBe('/x?to+ken=1&%E0%A4%A=2&a=token');
  });
});

describe('startupLogger', () => {
  it("writes each of Nest's levels at pino's, with the context Nest gives last", async () => {
    const { logger, lines } = recordingLogger('trace');
    const nest = startupLogger(logger);
    nest.log('started', 'NestFactory');
    nest.warn('slow', 'Store', 'extra');
    nest.debug?.(42);
    nest.verbose?.('detail', 7);
    nest.fatal?.('dying', 'Main');
    nest.error(new Error('broken'), 'Main');
    await written();
    expect(lines.map(({ level, msg, context }) => ({ level, msg, context }))).toEqual([
      { level: 30, msg: 'started', context: 'NestFactory' },
      { level: 40, msg: 'slow', context: 'extra' },
      { level: 20, msg: '42', context: undefined },
      { level: 10, msg: 'detail', context: undefined },
      { level: 60, msg: 'dying', context: 'Main' },
      { level: 50, msg: 'broken', context: 'Main' },
    ]);
    expect(lines[5].err).toMatchObject({ type: 'Error', message: 'broken' });
    expect(lines[0].err).toBeUndefined();
  });
});

describe('loggerModuleParams', () => {
  it('hands nestjs-pino the one logger, with no per-request middleware', () => {
    const { logger } = recordingLogger();
    expect(loggerModuleParams(logger)).toEqual({ pinoHttp: { logger }, useExisting: true, forRoutes: [] });
  });
});

describe('the request line', () => {
  async function served(level = 'info') {
    const { logger, lines } = recordingLogger(level);
    const fastify = Fastify();
    logRequests(fastify, logger);
    fastify.get('/users/:id', async (request, reply) => {
      (request as unknown as { user: { accountId: string } }).user = { accountId: 'a-7' };
      const status = Number((request.query as { status?: string }).status ?? 200);
      return reply.status(status).send({});
    });
    await fastify.ready();
    return { fastify, lines };
  }

  it('says who asked what and how it went, the user agent cut to 200 characters', async () => {
    const { fastify, lines } = await served();
    await fastify.inject({
      method: 'GET',
      url: '/users/u-1?token=secret',
      headers: { 'user-agent': 'a'.repeat(300), 'x-request-id': 'client-1' },
    });
    await fastify.inject({ method: 'GET', url: '/nowhere' });
    await written();
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: {
        method: 'GET',
        route: '/users/:id',
        url: '/users/u-1?token=[redacted]',
        client: '127.0.0.1',
        userAgent: 'a'.repeat(200),
      },
      accountId: 'a-7',
      res: { statusCode: 200 },
    });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(lines[1]).toMatchObject({
      level: 40,
      req: { route: null, url: '/nowhere', userAgent: 'lightMyRequest' },
      accountId: null,
      res: { statusCode: 404 },
    });
    await fastify.close();
  });

  it('writes client errors as warnings and server errors as errors, and nothing below the level', async () => {
    const { fastify, lines } = await served('warn');
    for (const status of [200, 399, 400, 499, 500, 503]) {
      await fastify.inject({ method: 'GET', url: `/users/u-1?status=${status}` });
    }
    await written();
    expect(lines.map((line) => [line.res.statusCode, line.level])).toEqual([
      [400, 40],
      [499, 40],
      [500, 50],
      [503, 50],
    ]);
    await fastify.close();
  });

  it('writes what could be read of a request the parser refused, at the level of its status', async () => {
    const { logger, lines } = recordingLogger('warn');
    logUnparsedRequest(logger, 'r-1', '10.0.0.1', 400);
    logUnparsedRequest(logger, 'r-2', null, 200);
    logUnparsedRequest(logger, 'r-3', null, 503);
    await written();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'request completed',
        req: {
          id: 'r-1',
          clientRequestId: null,
          method: null,
          route: null,
          url: null,
          client: '10.0.0.1',
          userAgent: null,
        },
        accountId: null,
        res: { statusCode: 400 },
      }),
      expect.objectContaining({ level: 50, req: expect.objectContaining({ id: 'r-3' }) }),
    ]);
  });
});

describe('logLifecycle', () => {
  it('writes listening with the address, ready once caught up, then draining and stopped', async () => {
    const { logger, lines } = recordingLogger();
    const fastify = Fastify();
    let caughtUp = false;
    logLifecycle(fastify, logger, { metricsPort: 9464 } as ChronicleConfig, () => caughtUp);
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    const { port } = fastify.server.address() as { port: number };
    await twoPolls();
    expect(lines.map((line) => line.msg)).toEqual(['listening']);
    expect(lines[0].address).toBe(`127.0.0.1:${port}`);
    caughtUp = true;
    await eventually('ready', () => lines.length === 2);
    await fastify.close();
    await written();
    expect(lines.map((line) => line.msg)).toEqual([
      'listening',
      'ready',
      'draining: requests in flight finish, then the server stops',
      'stopped',
    ]);
    expect(lines[1].metricsPort).toBe(9464);
  });

  it('names no metrics port when metrics are off, and is never ready once closed', async () => {
    const off = recordingLogger();
    const fastify = Fastify();
    let caughtUp = false;
    logLifecycle(fastify, off.logger, { metricsPort: 0 } as ChronicleConfig, () => caughtUp);
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    caughtUp = true;
    await eventually('ready', () => off.lines.length === 2);
    expect(off.lines[1]).toMatchObject({ msg: 'ready', metricsPort: null });

    const closed = recordingLogger();
    const second = Fastify();
    logLifecycle(second, closed.logger, { metricsPort: 0 } as ChronicleConfig, () => caughtUp);
    caughtUp = false;
    await second.listen({ port: 0, host: '127.0.0.1' });
    await second.close();
    caughtUp = true;
    await twoPolls();
    expect(closed.lines.map((line) => line.msg)).not.toContain('ready');
    await fastify.close();
  });
});
