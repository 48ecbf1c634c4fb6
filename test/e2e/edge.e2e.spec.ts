import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { clearOfLimitWindowEnd } from './support/limit-window';
import { basic, issueToken, rawRequest, startTestApp, TestAccount, TestApp } from './support/test-app';

const run = promisify(execFile);
const PROBLEM = /^application\/problem\+json/;

/** Writes raw bytes on a socket and collects what the server answers until it closes. */
function rawExchange(url: string, bytes: string, keepOpen = false): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(bytes);
      if (!keepOpen) socket.end();
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);

describe('the HTTP edge', () => {
  let subject: TestApp;
  let account: TestAccount;
  let colonAccount: TestAccount;
  let token: string;
  const COLON_PASSWORD = 'pass:with:colons:';

  beforeAll(async () => {
    subject = await startTestApp();
    account = await subject.createAccount();
    colonAccount = await subject.createAccount({ password: COLON_PASSWORD });
    token = await issueToken(subject.url, account);
    await subject.seedCustomers(30);
  });
  afterAll(() => subject.destroy());

  const customers = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${subject.url}/customers${query}`, { headers });

  describe('Basic credentials (RFC 7617)', () => {
    it('takes everything after the first colon as the password', async () => {
      expect((await customers('', { authorization: basic(colonAccount) })).status).toBe(200);
    });

    it('refuses a prefix of a password that holds a colon', async () => {
      const prefix = { email: colonAccount.email, password: 'pass' };
      expect((await customers('', { authorization: basic(prefix) })).status).toBe(401);
    });

    it('accepts the credentials written in the URL, as curl sends them', async () => {
      const url = new URL(`${subject.url}/customers?maxpagesize=1`);
      url.username = encodeURIComponent(colonAccount.email);
      url.password = encodeURIComponent(COLON_PASSWORD);
      const { stdout } = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', url.toString()]);
      expect(stdout).toBe('200');
    });
  });

  describe('access_token', () => {
    it.each([
      ['GET', '/customers'],
      ['POST', '/api/v1/account/tokens'],
      ['DELETE', '/api/v1/account/tokens/current'],
    ])('answers a repeated parameter on %s %s with 400 problem details', async (method, path) => {
      const response = await fetch(`${subject.url}${path}?access_token=a&access_token=b`, { method });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(PROBLEM);
      expect(await response.json()).toMatchObject({ type: 'multiple-credentials' });
    });

    it('reads the parameter after percent-decoding, and keeps its URL out of Referer', async () => {
      const response = await customers(`?access%5Ftoken=${token}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('cache-control')).toBe('no-store');
    });

    it('never takes a token from a request body', async () => {
      const patchWith = (authorization?: string) =>
        fetch(`${subject.url}/users/${account.userId}`, {
          method: 'PATCH',
          headers: {
            'content-type': 'application/merge-patch+json',
            ...(authorization ? { authorization } : {}),
          },
          body: JSON.stringify({ access_token: token }),
        });
      const wrongBasic = await patchWith(basic({ email: account.email, password: 'wrong' }));
      expect(wrongBasic.status).toBe(401);
      expect((await patchWith()).status).toBe(401);
      // A route that takes no body refuses one, rather than reading anything from it.
      const tokens = await fetch(`${subject.url}/api/v1/account/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ access_token: token }),
      });
      expect(tokens.status).toBe(415);
    });
  });

  describe('page numbers and bounds of any size', () => {
    it.each([
      ['?page=999999999999999&maxpagesize=1000', []],
      ['?page=9999999999999999999999999999', []],
      [`?page=${'9'.repeat(400)}`, []],
      ['?gt=99999999999999999999', []],
      ['?lt=-99999999999999999999', []],
    ])('answers %s with 200 and the page', async (query, ids) => {
      const response = await customers(query, { authorization: `Bearer ${token}` });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { id: number }[]).map((customer) => customer.id)).toEqual(ids);
    });

    it('treats a huge lt as no upper bound', async () => {
      const response = await customers('?lt=99999999999999999999&maxpagesize=5', {
        authorization: `Bearer ${token}`,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-total-count')).toBe('30');
    });
  });

  describe('PUT /api/v1/account/password', () => {
    const put = (body: string, contentType = 'application/json') =>
      fetch(`${subject.url}/api/v1/account/password`, {
        method: 'PUT',
        headers: { 'content-type': contentType },
        body,
      });

    it.each([
      '{"constructor":1}',
      '{"toString":"x"}',
      '{"hasOwnProperty":1}',
      '{"__proto__":{"email":"a@b.c"}}',
    ])('answers %s, whose member is inherited by every object, with 400', async (body) => {
      const response = await put(body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ type: 'invalid-password-request' });
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json'])(
      'answers Content-Type %s with 415',
      async (contentType) => {
        const response = await put(JSON.stringify({ email: account.email }), contentType);
        expect(response.status).toBe(415);
        expect(response.headers.get('content-type')).toMatch(PROBLEM);
      },
    );

    it('answers JSON nested deeper than 32 levels with 400', async () => {
      const deep = `{"token":${'['.repeat(2000)}${']'.repeat(2000)},"new":"a fine passphrase"}`;
      const response = await put(deep);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ type: 'malformed-json' });
      const atLimit = `{"token":${'['.repeat(31)}${']'.repeat(31)},"new":"a fine passphrase"}`;
      expect((await put(atLimit)).status).toBe(400);
    });

    it('keeps prototype-named members plain data, under every parser', async () => {
      const body = '{"token":{"constructor":{"prototype":{"x":1}}},"new":"a fine passphrase"}';
      const asJson = await put(body);
      expect(asJson.status).toBe(400);
      expect(asJson.headers.get('content-type')).toMatch(PROBLEM);
      expect((await put(body, 'application/merge-patch+json')).status).toBe(415);
      expect(({} as Record<string, unknown>).x).toBeUndefined();
    });
  });

  describe('errors raised before routing', () => {
    it('answers a malformed URL with problem details', async () => {
      const response = await fetch(`${subject.url}/users/%E0%A4%A`, {
        headers: { authorization: basic(account) },
      });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(PROBLEM);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-request-id')).toBeTruthy();
    });

    it('answers a request Node cannot parse with problem details', async () => {
      const answer = await rawExchange(
        subject.url,
        'GET /customers HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      );
      expect(statusOf(answer)).toBe(400);
      expect(answer).toMatch(/Content-Type: application\/problem\+json/i);
      expect(answer).toMatch(/X-Content-Type-Options: nosniff/i);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400 });
    });

    it.each([
      ['an unknown route', '/no-such-route/ct2.pathsecret?access_token=ct2.querysecret', 404],
      ['a reset link that lands on the API', '/reset-password?token=resetsecret', 404],
      ['a malformed URL', '/users/%ff?access_token=ct2.querysecret', 400],
    ])('never echoes the URL of %s in its problem details', async (_case, path, status) => {
      const response = await fetch(`${subject.url}${path}`);
      expect(response.status).toBe(status);
      const body = await response.text();
      expect(body).not.toMatch(/secret|no-such-route|reset-password/);
      expect(JSON.parse(body)).toMatchObject({ status, detail: expect.any(String) });
    });

    it("answers a request before the parser's 400 for unframed bytes behind it, on a route that awaits", async () => {
      // HTTP/1.1 reads the bytes as a next request the parser refuses: the answers keep their order.
      const answer = await rawExchange(
        subject.url,
        `GET /customers/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
          'Content-Type: application/json\r\n\r\n{"name":"x"}',
        // Not half-closed: Node's server drops a request still running when its client ends.
        true,
      );
      expect(statusOf(answer)).toBe(200);
      expect(answer.slice(answer.indexOf('\r\n\r\n'))).toMatch(/HTTP\/1\.1 400 Bad Request/);
    });

    it('answers an unknown route with problem details', async () => {
      const response = await fetch(`${subject.url}/nowhere`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(PROBLEM);
    });
  });

  describe('methods a path does not offer (RFC 9110)', () => {
    type Paths = Record<string, Record<string, unknown>>;
    let paths: Paths;
    beforeAll(async () => {
      paths = ((await (await fetch(`${subject.url}/docs/json`)).json()) as { paths: Paths }).paths;
    });

    /** What Allow must say for a documented path: its operations, HEAD with GET, and OPTIONS. */
    const allowOf = (path: string): string[] => {
      const methods = Object.keys(paths[path]).map((method) => method.toUpperCase());
      return [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].sort();
    };
    const listed = (header: string | null) => (header ?? '').split(', ').sort();
    const concrete = (path: string) => path.replace(/\{\w+\}/g, 'x');

    it.each([
      ['PUT', '/customers'],
      ['POST', '/users'],
      ['DELETE', '/customers'],
      ['GET', '/api/v1/account/password'],
      ['PUT', '/users/{userId}'],
    ])('answers %s %s with 405, Allow and problem details, before any credentials', async (method, path) => {
      const response = await fetch(`${subject.url}${concrete(path)}`, { method });
      expect(response.status).toBe(405);
      expect(listed(response.headers.get('allow'))).toEqual(allowOf(path));
      expect(response.headers.get('content-type')).toMatch(PROBLEM);
      expect(response.headers.get('x-request-id')).toBeTruthy();
      expect(await response.json()).toMatchObject({ type: 'method-not-allowed', status: 405 });
    });

    it('answers 405 for every documented path and every method it does not offer', async () => {
      let checked = 0;
      for (const path of Object.keys(paths)) {
        for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
          if (method.toLowerCase() in paths[path]) continue;
          const response = await fetch(`${subject.url}${concrete(path)}`, { method });
          await response.arrayBuffer();
          expect({ [`${method} ${path}`]: [response.status, listed(response.headers.get('allow'))] }).toEqual(
            {
              [`${method} ${path}`]: [405, allowOf(path)],
            },
          );
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(30);
    });

    it('answers OPTIONS on a known path with 204 and Allow, and on an unknown one with 404', async () => {
      const known = await fetch(`${subject.url}/users/x`, { method: 'OPTIONS' });
      expect(known.status).toBe(204);
      expect(listed(known.headers.get('allow'))).toEqual(allowOf('/users/{userId}'));
      expect(await known.text()).toBe('');
      const unknown = await fetch(`${subject.url}/nowhere`, { method: 'OPTIONS' });
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('content-type')).toMatch(PROBLEM);
    });

    it('answers 405 first when unframed bytes follow the request, as a body on GET without a length', async () => {
      // HTTP/1.1 reads the bytes as a next request the parser refuses: the answers keep their order.
      const answer = await rawExchange(
        subject.url,
        'GET /api/v1/account/password HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{"email":"a@a.aa"}',
      );
      expect(statusOf(answer)).toBe(405);
      expect(answer).toMatch(/^allow: PUT, OPTIONS$/im);
    });

    it('still answers a method on an unknown path with 404', async () => {
      const response = await fetch(`${subject.url}/nowhere`, { method: 'PUT' });
      expect(response.status).toBe(404);
      expect(response.headers.get('allow')).toBeNull();
    });
  });

  describe('security headers', () => {
    it.each([
      ['a list', '/customers', 200],
      ['a 401', '/customers?maxpagesize=1&x', 401],
      ['a 404', '/nowhere', 404],
      ['health', '/health/live', 200],
    ])('are on %s', async (_case, path, status) => {
      const response = await fetch(`${subject.url}${path}`, {
        headers: status === 200 && path === '/customers' ? { authorization: `Bearer ${token}` } : {},
      });
      expect(response.status).toBe(status);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(response.headers.get('content-security-policy')).toBe(
        "default-src 'none';frame-ancestors 'none'",
      );
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('let the docs page load its own assets', async () => {
      const response = await fetch(`${subject.url}/docs`);
      expect(response.status).toBe(200);
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("script-src 'self'");
      expect(policy).not.toContain('upgrade-insecure-requests');
    });
  });

  describe('/docs', () => {
    it.each([
      '',
      '/',
      '/json',
      '/swagger-ui-init.js',
      '/swagger-ui.css',
      '/swagger-ui-bundle.js',
      '/favicon-16x16.png',
    ])('serves what the page needs: /docs%s', async (path) => {
      expect((await fetch(`${subject.url}/docs${path}`)).status).toBe(200);
    });

    it.each([
      '/package.json',
      '/README.md',
      '/swagger-ui.js.map',
      '/%70ackage.json',
      '/index.js',
      '/oauth2-redirect.html',
    ])('serves nothing else of the package: /docs%s', async (path) => {
      const response = await fetch(`${subject.url}/docs${path}`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(PROBLEM);
    });
  });

  it('answers the same request identically whatever the order of its parameters', async () => {
    const page = async (query: string) => {
      const response = await customers(query, { authorization: `Bearer ${token}` });
      return { link: response.headers.get('link'), body: await response.text() };
    };
    expect(await page('?maxpagesize=3&gt=2&page=2')).toEqual(await page('?page=2&gt=2&maxpagesize=3'));
  });

  it('sends two Authorization headers to 400, whatever their schemes', async () => {
    const response = await rawRequest(`${subject.url}/customers`, 'GET', [
      'authorization',
      basic(account),
      'Authorization',
      `Bearer ${token}`,
    ]);
    expect(response.status).toBe(400);
  });
});

describe('the HTTP edge, configured', () => {
  it('cuts off a request that does not arrive within REQUEST_TIMEOUT, with a 408 problem', async () => {
    const subject = await startTestApp({ env: { REQUEST_TIMEOUT: '1' } });
    try {
      // Headers never finished: the server answers 408 and closes, instead of waiting for ever.
      const answer = await rawExchange(subject.url, 'GET /customers HTTP/1.1\r\nHost: x\r\n', true);
      expect(statusOf(answer)).toBe(408);
      expect(answer).toMatch(/Content-Type: application\/problem\+json/i);
    } finally {
      await subject.destroy();
    }
  });

  it('closes a connection that never sends a byte after REQUEST_TIMEOUT, and keeps an idle kept-alive one', async () => {
    const subject = await startTestApp({ env: { REQUEST_TIMEOUT: '1' } });
    try {
      const { hostname, port } = new URL(subject.url);
      const opened = Date.now();
      // Read, as a client must to see the server close (a paused socket never sees the end).
      const silent = rawExchange(subject.url, '', true);
      const kept = connect(Number(port), hostname, () =>
        kept.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n'),
      );
      kept.resume();
      expect(statusOf(await silent)).toBe(408);
      expect(Date.now() - opened).toBeLessThan(5_000);
      // Answered and idle as long: the keep-alive timeout, not the request's, decides when it goes.
      expect(kept.destroyed).toBe(false);
      kept.destroy();
    } finally {
      await subject.destroy();
    }
  });

  it('keeps one rate-limit bucket per forwarded client behind a trusted proxy', async () => {
    await clearOfLimitWindowEnd();
    const behindProxy = await startTestApp({
      env: { TRUST_PROXY: '127.0.0.1', RESET_REQUESTS_PER_CLIENT: '2' },
    });
    const direct = await startTestApp({ env: { RESET_REQUESTS_PER_CLIENT: '2' } });
    let n = 0;
    const request = (url: string, forwardedFor: string) =>
      fetch(`${url}/api/v1/account/password`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
        body: JSON.stringify({ email: `someone-${++n}@example.com` }),
      }).then((response) => response.status);
    try {
      expect([
        await request(behindProxy.url, '203.0.113.1'),
        await request(behindProxy.url, '203.0.113.1'),
      ]).toEqual([202, 202]);
      expect(await request(behindProxy.url, '203.0.113.1')).toBe(429);
      expect(await request(behindProxy.url, '203.0.113.2')).toBe(202);
      // Not trusted: the header is the client's word, and every client shares the socket's address.
      expect([await request(direct.url, '203.0.113.1'), await request(direct.url, '203.0.113.2')]).toEqual([
        202, 202,
      ]);
      expect(await request(direct.url, '203.0.113.3')).toBe(429);
    } finally {
      await behindProxy.destroy();
      await direct.destroy();
    }
  });

  it('answers browsers from the origins in CORS_ORIGINS, and only those', async () => {
    const subject = await startTestApp({ env: { CORS_ORIGINS: 'https://app.example.com' } });
    try {
      const preflight = await fetch(`${subject.url}/users/x`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'PATCH',
          'access-control-request-headers': 'authorization, content-type, if-match',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('PATCH');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('if-match');
      expect(preflight.headers.get('allow')).toBeNull();

      // Not a preflight: the methods the path offers, as without CORS.
      const options = await fetch(`${subject.url}/customers`, { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(options.headers.get('allow')?.split(', ')).toEqual(
        expect.arrayContaining(['GET', 'HEAD', 'OPTIONS']),
      );
      const unknown = await fetch(`${subject.url}/nowhere`, { method: 'OPTIONS' });
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      // A 405 carries CORS's headers, so that a browser's script can read it.
      const notOffered = await fetch(`${subject.url}/customers`, {
        method: 'DELETE',
        headers: { origin: 'https://app.example.com' },
      });
      expect(notOffered.status).toBe(405);
      expect(notOffered.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(notOffered.headers.get('access-control-expose-headers')).toContain('allow');

      const allowed = await fetch(`${subject.url}/health/live`, {
        headers: { origin: 'https://app.example.com' },
      });
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(allowed.headers.get('access-control-expose-headers')).toContain('x-total-count');
      const other = await fetch(`${subject.url}/health/live`, {
        headers: { origin: 'https://evil.example' },
      });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await subject.destroy();
    }
  });
});
