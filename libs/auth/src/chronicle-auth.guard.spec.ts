import { BadRequestException, ExecutionContext, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Principal, SecurityEvents } from '@chronicle/application';
import type { Role } from '@chronicle/domain';
import { AuthenticatedRequest, ChronicleAuthGuard, requireAuthentication } from './chronicle-auth.guard';
import { clientAddress } from './client-address';
import { CredentialVerifier } from './credential-verifier';
import { ObservedRequest } from './security-observation';
import { AUTH_OPTIONAL, IS_PUBLIC, OptionalAuth, Public } from './public.decorator';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { TokenRejection } from './token-rejection';

const principal = { accountId: 'account-1', roles: ['user'] } as unknown as Principal;
const basicHeader = (email: string, password: string) =>
  `Basic ${Buffer.from(`${email}:${password}`, 'utf8').toString('base64')}`;

type Request = ObservedRequest & AuthenticatedRequest;

function request(
  headers: [string, string][] = [],
  query: Record<string, string> = {},
  ip = '192.0.2.7',
): Request {
  const named = Object.fromEntries(headers.map(([name, value]) => [name.toLowerCase(), value]));
  return {
    raw: { rawHeaders: headers.flat() },
    headers: { 'user-agent': 'spec/1', ...named },
    method: 'GET',
    url: '/users/u-1',
    routeOptions: { url: '/users/:userId' },
    query,
    ip,
  };
}

function contextFor(req: Request, handler: object = () => undefined): ExecutionContext {
  return {
    getHandler: () => handler,
    getClass: () => class Controller {},
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
}

function setup(access: 'required' | 'public' | 'optional' = 'required', roles?: Role[]) {
  const reflector = new Reflector();
  const metadata = jest
    .spyOn(reflector, 'getAllAndOverride')
    .mockImplementation((key: unknown) =>
      key === IS_PUBLIC ? access === 'public' : key === AUTH_OPTIONAL ? access === 'optional' : roles,
    );

  const verifier = {
    bearer: jest.fn(async (token: string) =>
      token === 'good-token'
        ? principal
        : token === 'expired-token'
          ? new TokenRejection('expired', 't-7')
          : new TokenRejection('invalid', null),
    ),
    basic: jest.fn(async (email: string, password: string) =>
      email === 'ada@example.com' && password === 'right: with colon' ? principal : null,
    ),
  };
  const security = { observe: jest.fn() };
  const guard = new ChronicleAuthGuard(
    reflector,
    verifier as unknown as CredentialVerifier,
    security as unknown as SecurityEvents,
  );
  return { guard, verifier, metadata, security };
}

async function rejection(
  promise: Promise<unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (caught: unknown) => caught,
  );
  if (!(error instanceof UnauthorizedException) && !(error instanceof BadRequestException)) throw error;
  return { status: error.getStatus(), body: error.getResponse() as Record<string, unknown> };
}

describe('ChronicleAuthGuard', () => {
  it('lets a @Public() route through without reading credentials', async () => {
    const { guard, verifier } = setup('public');
    const req = request([['Authorization', 'Bearer bad-token']]);
    await expect(guard.canActivate(contextFor(req))).resolves.toBe(true);
    expect(verifier.bearer).not.toHaveBeenCalled();
    expect(req.user).toBeUndefined();
  });

  it('authenticates a Bearer header and a Basic header with its client address, each by its own strategy', async () => {
    const { guard, verifier } = setup();
    const bearer = request([['Authorization', 'Bearer good-token']]);
    await expect(guard.canActivate(contextFor(bearer))).resolves.toBe(true);
    expect(bearer.user).toBe(principal);
    expect(verifier.basic).not.toHaveBeenCalled();

    const basic = request([['Authorization', basicHeader('ada@example.com', 'right: with colon')]]);
    await expect(guard.canActivate(contextFor(basic))).resolves.toBe(true);
    expect(basic.user).toBe(principal);
    expect(verifier.basic).toHaveBeenCalledWith('ada@example.com', 'right: with colon', '192.0.2.7');
    expect(verifier.bearer).toHaveBeenCalledTimes(1);
  });

  it('takes a token from the access_token query parameter', async () => {
    const { guard } = setup();
    const req = request([], { access_token: 'good-token' });
    await expect(guard.canActivate(contextFor(req))).resolves.toBe(true);
    expect(req.user).toBe(principal);
  });

  it.each([
    ['no credentials', [], 'Credentials are required.', false],
    [
      'another scheme',
      [['Authorization', 'Digest abc']],
      'The Authorization scheme must be Bearer or Basic.',
      false,
    ],
    ['a malformed Basic header', [['Authorization', 'Basic !!!']], 'The credentials are invalid.', false],
    [
      'a wrong password',
      [['Authorization', basicHeader('ada@example.com', 'wrong')]],
      'The credentials are invalid.',
      false,
    ],
    [
      'a rejected token',
      [['Authorization', 'Bearer bad-token']],
      'The access token is invalid, expired or revoked.',
      true,
    ],
  ] as [string, [string, string][], string, boolean][])(
    'answers 401 for %s, saying why and whether a token was rejected',
    async (_case, headers, detail, invalidToken) => {
      const { guard } = setup();
      const req = request(headers);
      const { status, body } = await rejection(guard.canActivate(contextFor(req)));
      expect(status).toBe(401);
      expect(body).toEqual({
        type: 'unauthorized',
        title: 'Unauthorized',
        detail,
        challenge: { invalidToken },
      });
      expect(req.user).toBeUndefined();
    },
  );

  it('records a failed Basic login and a refused token as security events, each of its kind', async () => {
    const { guard, security } = setup();
    const wrong = request([['Authorization', basicHeader('ada@example.com', 'wrong')]]);
    expect((await rejection(guard.canActivate(contextFor(wrong)))).status).toBe(401);
    expect(security.observe).toHaveBeenCalledTimes(1);
    expect(security.observe.mock.calls[0]).toEqual([
      'LoginFailed.v1',
      {
        email: 'ada@example.com',
        accountId: null,
        client: '192.0.2.7',
        userAgent: 'spec/1',
        route: 'GET /users/:userId',
      },
    ]);
    for (const token of ['bad-token', 'expired-token']) {
      expect(
        await rejection(guard.canActivate(contextFor(request([['Authorization', `Bearer ${token}`]])))),
      ).toEqual({
        status: 401,
        body: {
          type: 'unauthorized',
          title: 'Unauthorized',
          detail: 'The access token is invalid, expired or revoked.',
          challenge: { invalidToken: true },
        },
      });
    }
    const seen = {
      email: null,
      accountId: null,
      client: '192.0.2.7',
      userAgent: 'spec/1',
      route: 'GET /users/:userId',
    };
    expect(security.observe.mock.calls.slice(1)).toEqual([
      ['AccessTokenRejected.v1', { ...seen, token: { reason: 'invalid', tokenId: null } }],
      ['AccessTokenRejected.v1', { ...seen, token: { reason: 'expired', tokenId: 't-7' } }],
    ]);
  });

  it("answers 403 to an account without the route's roles, recording it; an admin may call every route", async () => {
    const { guard, verifier, security } = setup('required', ['auditor']);
    const req = request([['Authorization', 'Bearer good-token']]);
    const forbidden = await guard.canActivate(contextFor(req)).then(
      () => null,
      (error: unknown) => error,
    );
    expect((forbidden as { getStatus(): number }).getStatus()).toBe(403);
    expect((forbidden as { getResponse(): unknown }).getResponse()).toEqual({
      type: 'forbidden',
      title: 'Forbidden',
      detail: 'This resource needs one of the roles: admin, auditor.',
    });
    expect(security.observe.mock.calls.map(([type]) => type)).toEqual(['AccessForbidden.v1']);
    verifier.bearer.mockResolvedValueOnce({ ...principal, roles: ['admin'] });
    await expect(
      guard.canActivate(contextFor(request([['Authorization', 'Bearer good-token']]))),
    ).resolves.toBe(true);
  });

  it.each([
    [['auditor', 'user'] as Role[], ['user'] as Role[], null],
    [['auditor'] as Role[], ['auditor', 'user'] as Role[], null],
    [['auditor', 'user'] as Role[], ['admin'] as Role[], null],
    [[] as Role[], ['auditor', 'user'] as Role[], 'This resource is for administrators only.'],
    [['auditor'] as Role[], ['user'] as Role[], 'This resource needs one of the roles: admin, auditor.'],
    [
      ['auditor', 'user'] as Role[],
      [] as Role[],
      'This resource needs one of the roles: admin, auditor, user.',
    ],
  ])(
    'a route for %j lets an account with %j through unless the 403 says %j',
    async (routeRoles, roles, detail) => {
      const { guard, verifier } = setup('required', routeRoles);
      verifier.bearer.mockResolvedValueOnce({ ...principal, roles });
      const outcome = await guard
        .canActivate(contextFor(request([['Authorization', 'Bearer good-token']])))
        .then(
          (allowed) => allowed,
          (error: { getStatus(): number; getResponse(): unknown }) => [
            error.getStatus(),
            error.getResponse(),
          ],
        );
      expect(outcome).toEqual(
        detail === null ? true : [403, { type: 'forbidden', title: 'Forbidden', detail }],
      );
    },
  );

  it('passes on a failure that is not an Error as one, never as a 401', async () => {
    const { guard, verifier } = setup();
    // What passport would pass on from a verifier that rejects with a string.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    verifier.bearer.mockImplementationOnce(() => Promise.reject('store unavailable'));
    await expect(
      guard.canActivate(contextFor(request([['Authorization', 'Bearer good-token']]))),
    ).rejects.toThrow(new Error('Authentication failed'));
  });

  it('records a request Fastify routed to no route template as unrouted, never by its URL', async () => {
    const { guard, security } = setup();
    const { routeOptions: _template, ...req } = request([['Authorization', 'Bearer bad-token']]);
    await rejection(guard.canActivate(contextFor(req)));
    expect(security.observe).toHaveBeenCalledWith(
      'AccessTokenRejected.v1',
      expect.objectContaining({ route: 'GET unrouted' }),
    );
  });

  it('answers 400 for credentials sent two ways', async () => {
    const { guard, verifier } = setup();
    const req = request([['Authorization', 'Bearer good-token']], { access_token: 'good-token' });
    const { status, body } = await rejection(guard.canActivate(contextFor(req)));
    expect(status).toBe(400);
    expect(body).toEqual({
      type: 'multiple-credentials',
      title: 'More than one set of credentials',
      detail: 'Send credentials one way only: one Authorization header, or one access_token parameter.',
    });
    expect(verifier.bearer).not.toHaveBeenCalled();
  });

  it("passes on a verifier's failure as it is, never as a 401", async () => {
    const { guard, verifier } = setup();
    verifier.bearer.mockRejectedValueOnce(new Error('store unavailable'));
    await expect(
      guard.canActivate(contextFor(request([['Authorization', 'Bearer good-token']]))),
    ).rejects.toThrow('store unavailable');
  });

  describe('@OptionalAuth()', () => {
    it('lets a request without credentials through, unauthenticated', async () => {
      const { guard } = setup('optional');
      const req = request();
      await expect(guard.canActivate(contextFor(req))).resolves.toBe(true);
      expect(req.user).toBeUndefined();
      expect(req.authFailure).toBeUndefined();
      expect(requireAuthentication(req).getResponse()).toEqual({
        type: 'unauthorized',
        title: 'Unauthorized',
        detail: 'Credentials are required.',
        challenge: { invalidToken: false },
      });
    });

    it('keeps the 401 of invalid credentials for the handler, and lets the request through', async () => {
      const { guard } = setup('optional');
      const req = request([['Authorization', 'Bearer bad-token']]);
      await expect(guard.canActivate(contextFor(req))).resolves.toBe(true);
      expect(req.user).toBeUndefined();
      expect(requireAuthentication(req)).toBe(req.authFailure);
      expect((req.authFailure!.getResponse() as Record<string, unknown>).challenge).toEqual({
        invalidToken: true,
      });
    });

    it('still refuses credentials sent two ways (400), and authenticates valid ones', async () => {
      const { guard } = setup('optional');
      const several = request([['Authorization', 'Bearer good-token']], { access_token: 'x' });
      expect((await rejection(guard.canActivate(contextFor(several)))).status).toBe(400);
      const valid = request([['Authorization', 'Bearer good-token']]);
      await guard.canActivate(contextFor(valid));
      expect(valid.user).toBe(principal);
    });
  });

  it("reads a handler's decorators once", async () => {
    const { guard, metadata } = setup();
    const handler = () => undefined;
    await guard.canActivate(contextFor(request([['Authorization', 'Bearer good-token']]), handler));
    const reads = metadata.mock.calls.length;
    expect(reads).toBeGreaterThan(0);
    await guard.canActivate(contextFor(request([['Authorization', 'Bearer good-token']]), handler));
    expect(metadata.mock.calls.length).toBe(reads);
  });
});

describe('clientAddress', () => {
  it("is Fastify's request.ip, or 'unknown' when there is none", () => {
    expect(clientAddress({ ip: '2001:db8::1' })).toBe('2001:db8::1');
    expect(clientAddress({})).toBe('unknown');
    expect(clientAddress({ ip: 42 })).toBe('unknown');
  });
});

describe("@Public() and @OptionalAuth(), read by the guard through Nest's Reflector", () => {
  class Routes {
    @Public()
    open() {}
    @OptionalAuth()
    maybe() {}
    closed() {}
  }
  const verifier = { bearer: jest.fn(async () => null), basic: jest.fn(async () => null) };
  const guard = new ChronicleAuthGuard(
    new Reflector(),
    verifier as unknown as CredentialVerifier,
    {
      observe: jest.fn(),
    } as unknown as SecurityEvents,
  );
  const contextOf = (handler: () => void): ExecutionContext =>
    ({
      getHandler: () => handler,
      getClass: () => Routes,
      switchToHttp: () => ({ getRequest: () => request() }),
    }) as unknown as ExecutionContext;

  it('lets the public and the optional route through without credentials, and not the other', async () => {
    await expect(guard.canActivate(contextOf(Routes.prototype.open))).resolves.toBe(true);
    await expect(guard.canActivate(contextOf(Routes.prototype.maybe))).resolves.toBe(true);
    await expect(guard.canActivate(contextOf(Routes.prototype.closed))).rejects.toBeInstanceOf(
      UnauthorizedException,
    );
  });
});

describe('ChronicleAuthGuard, Bearer through passport-http-bearer', () => {
  afterEach(() => jest.restoreAllMocks());

  it("hands passport-http-bearer's strategy a view holding only the token the one parser found", async () => {
    const authenticate = jest.spyOn(BearerStrategy.prototype, 'authenticate');
    const { guard, verifier } = setup();
    for (const req of [
      request([['Authorization', 'Bearer good-token']]),
      request([], { access_token: 'good-token' }),
    ]) {
      await expect(guard.canActivate(contextFor(req))).resolves.toBe(true);
      expect(req.user).toBe(principal);
    }
    expect(authenticate).toHaveBeenCalledTimes(2);
    for (const [view] of authenticate.mock.calls) {
      expect(view).toMatchObject({ query: { access_token: 'good-token' } });
      expect(view).not.toHaveProperty('raw');
      expect(view).not.toHaveProperty('headers');
      expect(view).not.toHaveProperty('body');
    }
    expect(verifier.bearer.mock.calls).toEqual([['good-token'], ['good-token']]);
  });

  it('never takes a token from a body: without other credentials it is a 401, no strategy run', async () => {
    const authenticate = jest.spyOn(BearerStrategy.prototype, 'authenticate');
    const { guard, verifier } = setup();
    const req = Object.assign(request(), { body: { access_token: 'good-token' } });
    expect(await rejection(guard.canActivate(contextFor(req)))).toMatchObject({
      status: 401,
      body: { detail: 'Credentials are required.' },
    });
    expect(authenticate).not.toHaveBeenCalled();
    expect(verifier.bearer).not.toHaveBeenCalled();
  });

  it('answers an empty token, which the strategy refuses unread, as an invalid token, recorded', async () => {
    const { guard, verifier, security } = setup();
    const req = request([['Authorization', 'Bearer ']]);
    expect(await rejection(guard.canActivate(contextFor(req)))).toMatchObject({
      status: 401,
      body: { challenge: { invalidToken: true } },
    });
    expect(verifier.bearer).not.toHaveBeenCalled();
    expect(security.observe).toHaveBeenCalledWith(
      'AccessTokenRejected.v1',
      expect.objectContaining({ token: { reason: 'invalid', tokenId: null } }),
    );
  });
});
