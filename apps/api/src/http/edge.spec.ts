import { connect } from 'node:net';
import Fastify from 'fastify';
import pino from 'pino';
import { ChronicleConfig } from '@chronicle/config';
import {
  edgeOptions,
  installEdge,
  JSON_MEDIA_TYPE,
  MAX_JSON_DEPTH,
  MERGE_PATCH_MEDIA_TYPE,
  parseJson,
} from './edge';
import { recordingLogger } from './recording-logger.spec-helper';

const nested = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);

/** What parseJson throws for `text`, or undefined when it parses. */
function refusalOf(text: string): (Error & { statusCode?: number }) | undefined {
  try {
    parseJson(text);
    return undefined;
  } catch (error) {
    return error as Error & { statusCode?: number };
  }
}

describe('parseJson', () => {
  it('parses JSON as JSON.parse does, prototype-named members kept as plain members', () => {
    expect(parseJson('{"a":[1,{"b":null}],"c":"d"}')).toEqual({ a: [1, { b: null }], c: 'd' });
    const parsed = parseJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it(`takes nesting up to ${MAX_JSON_DEPTH} levels, and refuses one more as a 400 before parsing`, () => {
    expect(parseJson(nested(MAX_JSON_DEPTH))).toBeDefined();
    const refused = refusalOf(nested(MAX_JSON_DEPTH + 1));
    expect(refused).toBeInstanceOf(SyntaxError);
    expect(refused).toMatchObject({
      statusCode: 400,
      message: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
    });
    // Objects count as arrays do, and the scan stops at the first level too many, valid JSON or not.
    expect(refusalOf(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1`)?.message).toContain('nested deeper');
  });

  it('counts the depth, not the brackets: closed siblings give their level back', () => {
    const siblings = `[${Array.from({ length: 100 }, () => nested(MAX_JSON_DEPTH - 1)).join(',')}]`;
    expect(parseJson(siblings)).toHaveLength(100);
    const objects = `[${Array.from({ length: MAX_JSON_DEPTH * 2 }, () => '{"a":{}}').join(',')}]`;
    expect(parseJson(objects)).toHaveLength(MAX_JSON_DEPTH * 2);
    expect(
      parseJson(`{"a":${nested(MAX_JSON_DEPTH - 1)},"b":{"c":${nested(MAX_JSON_DEPTH - 2)}}}`),
    ).toBeDefined();
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const brackets = '['.repeat(MAX_JSON_DEPTH * 2) + '{'.repeat(MAX_JSON_DEPTH * 2);
    expect(parseJson(JSON.stringify({ a: brackets }))).toEqual({ a: brackets });
    // An escaped quote does not end the string: the brackets after it are still text.
    expect(parseJson(JSON.stringify({ a: `"${brackets}` }))).toEqual({ a: `"${brackets}` });
    // An escaped backslash does not escape the quote after it: the string ends there.
    const outside = `{"a":"\\\\","b":${nested(MAX_JSON_DEPTH)}}`;
    expect(refusalOf(outside)?.message).toContain('nested deeper');
    expect(parseJson(`{"a":"\\\\","b":${nested(MAX_JSON_DEPTH - 1)}}`)).toMatchObject({ a: '\\' });
  });

  it('answers text that is not JSON with a 400 of its own words', () => {
    for (const text of ['', '{', '{"a":}', "{'a':1}", '[1,]', 'nul']) {
      expect(refusalOf(text)).toMatchObject({
        statusCode: 400,
        message: 'The request body is not valid JSON.',
      });
    }
  });
});

/** The edge on a bare Fastify, with its log recorded. */
async function bareEdge(overrides: Partial<ChronicleConfig> = {}) {
  const { logger, lines } = recordingLogger();
  const config = Object.assign(
    { requestTimeoutSeconds: 30, trustProxy: false, corsOrigins: null } as unknown as ChronicleConfig,
    overrides,
  );
  const fastify = Fastify(edgeOptions(config, logger));
  await installEdge(fastify, config);
  const echo = (request: { body: unknown }) => ({ body: request.body ?? null });
  fastify.post('/json', { config: { chronicleConsumes: [JSON_MEDIA_TYPE] } }, echo);
  fastify.post('/both', { config: { chronicleConsumes: [JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE] } }, echo);
  fastify.post('/none', echo);
  return { fastify, lines };
}

/** The raw bytes the server answers `request` with, read until it closes the connection. */
async function rawAnswer(port: number, request: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let text = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

function parsedAnswer(raw: string) {
  const [head, body] = raw.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 2),
    ]),
  );
  return { statusLine, headers, body };
}

describe('requests the edge parses', () => {
  it('parses a body only for a route that takes its media type', async () => {
    const { fastify } = await bareEdge();
    try {
      const post = (url: string, contentType: string, payload = '{"a":1}') =>
        fastify.inject({ method: 'POST', url, headers: { 'content-type': contentType }, payload });
      expect((await post('/json', JSON_MEDIA_TYPE)).json()).toEqual({ body: { a: 1 } });
      expect((await post('/both', MERGE_PATCH_MEDIA_TYPE)).json()).toEqual({ body: { a: 1 } });
      expect((await post('/both', `${JSON_MEDIA_TYPE}; charset=utf-8`)).json()).toEqual({ body: { a: 1 } });
      const onlyJson = await post('/json', MERGE_PATCH_MEDIA_TYPE);
      expect(onlyJson.statusCode).toBe(415);
      expect(onlyJson.json().message).toBe('The request body must be application/json.');
      const none = await post('/none', JSON_MEDIA_TYPE);
      expect(none.statusCode).toBe(415);
      expect(none.json().message).toBe('This endpoint takes no request body.');
      // Fastify's default parsers are gone: text is no one's media type.
      expect((await post('/json', 'text/plain', 'a')).statusCode).toBe(415);
      const deep = await post('/json', JSON_MEDIA_TYPE, nested(MAX_JSON_DEPTH + 1));
      expect(deep.statusCode).toBe(400);
      expect(deep.json().message).toContain('nested deeper');
      const broken = await post('/json', JSON_MEDIA_TYPE, '{"a":');
      expect(broken.statusCode).toBe(400);
      expect(broken.json().message).toBe('The request body is not valid JSON.');
    } finally {
      await fastify.close();
    }
  });

  it('names every media type a route takes when it refuses another', async () => {
    const { fastify } = await bareEdge();
    try {
      fastify.post('/patch', { config: { chronicleConsumes: [MERGE_PATCH_MEDIA_TYPE] } }, () => ({}));
      const response = await fastify.inject({
        method: 'POST',
        url: '/both',
        headers: { 'content-type': JSON_MEDIA_TYPE },
        payload: '{}',
      });
      expect(response.statusCode).toBe(200);
      const refused = await fastify.inject({
        method: 'POST',
        url: '/patch',
        headers: { 'content-type': JSON_MEDIA_TYPE },
        payload: '{}',
      });
      expect(refused.json().message).toBe('The request body must be application/merge-patch+json.');
    } finally {
      await fastify.close();
    }
  });
});

describe("what Node's HTTP parser refuses", () => {
  it.each([
    [
      'headers over their limit',
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'Request Header Fields Too Large',
      'headers-too-large',
      'The request headers are too large.',
    ],
    [
      'a header that is not one',
      'GET / HTTP/1.1\r\nBad Header\r\n\r\n',
      400,
      'Bad Request',
      'bad-request',
      'The request is not valid HTTP.',
    ],
  ])(
    'answers %s with problem details on the socket, and logs it',
    async (_case, request, status, title, type, detail) => {
      const { fastify, lines } = await bareEdge();
      try {
        await fastify.listen({ port: 0, host: '127.0.0.1' });
        const { port } = fastify.server.address() as { port: number };
        const { statusLine, headers, body } = parsedAnswer(await rawAnswer(port, request));
        expect(statusLine).toBe(`HTTP/1.1 ${status} ${title}`);
        expect(JSON.parse(body)).toEqual({ type, title, status, detail });
        expect(headers).toEqual({
          'content-type': 'application/problem+json',
          'content-length': String(Buffer.byteLength(body)),
          'x-request-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
          'x-content-type-options': 'nosniff',
          'cache-control': 'no-store',
          connection: 'close',
        });
        const logged = lines.filter((line) => line.msg === 'request completed');
        expect(logged).toEqual([
          expect.objectContaining({
            req: expect.objectContaining({ id: headers['x-request-id'], client: '127.0.0.1' }),
            res: { statusCode: status },
          }),
        ]);
      } finally {
        await fastify.close();
      }
    },
  );

  it('answers a request that does not arrive in time with a 408', async () => {
    const { fastify } = await bareEdge({ requestTimeoutSeconds: 0.3 });
    try {
      await fastify.listen({ port: 0, host: '127.0.0.1' });
      const { port } = fastify.server.address() as { port: number };
      const { statusLine, body } = parsedAnswer(await rawAnswer(port, 'GET / HTTP/1.1\r\nHost: x\r\n'));
      expect(statusLine).toBe('HTTP/1.1 408 Request Timeout');
      expect(JSON.parse(body)).toMatchObject({
        type: 'request-timeout',
        detail: 'The request did not arrive in time.',
      });
    } finally {
      await fastify.close();
    }
  });

  it('writes nothing on a connection the client reset or that is already gone', () => {
    const { clientErrorHandler } = edgeOptions(
      { requestTimeoutSeconds: 30, trustProxy: false } as unknown as ChronicleConfig,
      pino({ level: 'silent' }),
    );
    const socket = (destroyed: boolean) => ({
      destroyed,
      writable: true,
      write: jest.fn(),
      destroy: jest.fn(),
    });
    // What Node's parser gives the handler: an error with a code.
    const parseError = () => Object.assign(new Error('parse'), { code: 'HPE_INVALID_HEADER_TOKEN' }) as never;
    const reset = socket(false);
    clientErrorHandler!(Object.assign(new Error('reset'), { code: 'ECONNRESET' }) as never, reset as never);
    const gone = socket(true);
    clientErrorHandler!(parseError(), gone as never);
    for (const each of [reset, gone]) {
      expect(each.write).not.toHaveBeenCalled();
      expect(each.destroy).not.toHaveBeenCalled();
    }
    const unwritable = { ...socket(false), writable: false };
    const error = parseError();
    clientErrorHandler!(error, unwritable as never);
    expect(unwritable.write).not.toHaveBeenCalled();
    expect(unwritable.destroy).toHaveBeenCalledWith(error);
  });
});

describe('CORS', () => {
  const origin = 'https://app.example';

  it('answers a preflight from a configured origin with what the API takes', async () => {
    const { fastify } = await bareEdge({ corsOrigins: [origin] });
    try {
      const preflight = await fastify.inject({
        method: 'OPTIONS',
        url: '/json',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers).toMatchObject({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, HEAD, PATCH, PUT, POST, DELETE',
        'access-control-allow-headers':
          'authorization, content-type, accept, if-match, if-none-match, idempotency-key, x-request-id',
        'access-control-max-age': '600',
      });
      const read = await fastify.inject({
        method: 'POST',
        url: '/json',
        headers: { origin, 'content-type': JSON_MEDIA_TYPE },
        payload: '{}',
      });
      expect(read.headers['access-control-allow-origin']).toBe(origin);
      expect(read.headers['access-control-expose-headers']).toBe(
        'link, x-total-count, etag, x-request-id, www-authenticate, retry-after, accept-patch, chronicle-chain-broken, allow',
      );
      const other = await fastify.inject({
        method: 'GET',
        url: '/json',
        headers: { origin: 'https://evil.example' },
      });
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await fastify.close();
    }
  });

  it('leaves an OPTIONS that is not a preflight to the API: Allow, not CORS', async () => {
    const { fastify } = await bareEdge({ corsOrigins: [origin] });
    try {
      for (const headers of [{ origin }, { 'access-control-request-method': 'POST' }]) {
        const options = await fastify.inject({ method: 'OPTIONS', url: '/json', headers });
        expect(options.statusCode).toBe(204);
        expect(options.headers.allow).toBe('POST, OPTIONS');
        expect(options.headers['access-control-allow-methods']).toBeUndefined();
      }
    } finally {
      await fastify.close();
    }
  });

  it("allows any origin under '*', and none without CORS_ORIGINS", async () => {
    const preflight = {
      method: 'OPTIONS' as const,
      url: '/json',
      headers: { origin, 'access-control-request-method': 'POST' },
    };
    const any = await bareEdge({ corsOrigins: '*' } as unknown as Partial<ChronicleConfig>);
    try {
      expect((await any.fastify.inject(preflight)).headers['access-control-allow-origin']).toBe('*');
    } finally {
      await any.fastify.close();
    }
    const none = await bareEdge();
    try {
      const answer = await none.fastify.inject(preflight);
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      expect(answer.headers.allow).toBe('POST, OPTIONS');
    } finally {
      await none.fastify.close();
    }
  });
});

describe('security headers', () => {
  it("give the docs' own pages their policy, and every other path, /docs in its middle included, the API's", async () => {
    const { fastify } = await bareEdge();
    try {
      fastify.get('/docs/*', () => 'asset');
      fastify.get('/users/docs', () => ({}));
      const asset = await fastify.inject({ method: 'GET', url: '/docs/swagger-ui.css' });
      expect(asset.statusCode).toBe(200);
      expect(asset.headers['content-security-policy']).toContain("script-src 'self'");
      const api = await fastify.inject({ method: 'GET', url: '/users/docs' });
      expect(api.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
      expect(api.headers['cache-control']).toBe('no-store');
      const other = await fastify.inject({ method: 'GET', url: '/docs/package.json' });
      expect(other.statusCode).toBe(404);
    } finally {
      await fastify.close();
    }
  });
});

describe('edgeOptions', () => {
  it('bounds bodies, path parameters and the time a request may take to arrive', () => {
    const options = edgeOptions(
      { requestTimeoutSeconds: 0.5, trustProxy: ['10.0.0.0/8'] } as unknown as ChronicleConfig,
      pino({ level: 'silent' }),
    );
    expect(options).toMatchObject({
      bodyLimit: 64 * 1024,
      routerOptions: { maxParamLength: 200 },
      trustProxy: ['10.0.0.0/8'],
      requestTimeout: 500,
      http: { headersTimeout: 500, connectionsCheckingInterval: 500 },
    });
    const slow = edgeOptions(
      { requestTimeoutSeconds: 30, trustProxy: false } as unknown as ChronicleConfig,
      pino({ level: 'silent' }),
    );
    expect(slow.http).toEqual({ headersTimeout: 30_000, connectionsCheckingInterval: 1000 });
  });
});
