import {
  ArgumentsHost,
  BadRequestException,
  HttpException,
  Logger,
  NotFoundException,
  ServiceUnavailableException,
  UnauthorizedException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import {
  ConcurrencyConflictError,
  EmailTakenError,
  ForbiddenError,
  PreconditionFailedError,
  SecurityEvents,
  TooManyAttemptsError,
} from '@chronicle/application';
import {
  AlreadyExistsError,
  CredentialsRevokedError,
  ErasedError,
  InvalidResetTokenError,
  NotFoundError,
  PasswordChangedMeanwhileError,
  UnknownEventTypeError,
  ValidationError,
  WrongPasswordError,
} from '@chronicle/domain';
import { StoreTimeoutError, SubjectErasedError } from '@chronicle/event-store';
import { ProblemDetailsFilter, toProblem } from './problem-details';

const request = { method: 'GET', url: '/customers' };

describe('toProblem for outages', () => {
  it.each([
    ['a full disk', Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })],
    ['a frozen EventStoreDB', new StoreTimeoutError('EventStoreDB', 3500)],
    ['a MongoDB connection the server closed', Object.assign(new Error('socket ended'), { code: 'EPIPE' })],
  ])('answers %s with 503 and Retry-After, saying nothing of the store', (_case, error) => {
    const { problem, headers } = toProblem(error, request);
    expect(problem).toEqual({
      type: 'service-unavailable',
      title: 'Service Unavailable',
      status: 503,
      detail: 'A store the service needs is unavailable; try again later.',
    });
    expect(headers).toEqual({ 'retry-after': '5' });
  });

  it('keeps the failed checks of readiness, and asks the client to come back', () => {
    const details = {
      readModels: { status: 'down', message: 'catching up with the event history', head: '42' },
    };
    const { problem, headers } = toProblem(
      new ServiceUnavailableException({ status: 'error', info: {}, error: details, details }),
      request,
    );
    expect(problem).toMatchObject({ status: 503, detail: 'Not ready: see checks.', checks: details });
    expect(headers['retry-after']).toBe('5');
  });

  it('answers a stream holding an event type this build does not know with 503 naming the type, not the position', () => {
    const { problem, headers } = toProblem(
      new UnknownEventTypeError('UserPatched.v9', 'user-1', '42'),
      request,
    );
    expect(problem).toEqual({
      type: 'unknown-event-type',
      title: 'Service Unavailable',
      status: 503,
      detail:
        'The history of this resource holds an event this version of the service does not know ' +
        '(UserPatched.v9): it cannot be changed until a version that knows it runs.',
    });
    expect(headers).toEqual({ 'retry-after': '5' });
  });

  it('still answers a bug with 500', () => {
    expect(toProblem(new TypeError('x is undefined'), request).problem.status).toBe(500);
  });
});

describe('toProblem and the request URL', () => {
  const url = '/no-such-route/ct2.secret?access_token=ct2.secret&x=1';

  it.each([
    ['a 404 quoting the URL', new NotFoundException(`Cannot GET ${url}`), 404],
    [
      'a 400 quoting the path',
      Object.assign(new Error(`'/no-such-route/ct2.secret' is not a valid url component`), {
        statusCode: 400,
        code: 'FST_ERR_BAD_URL',
      }),
      400,
    ],
    ['a 400 quoting the query', new BadRequestException('bad ?access_token=ct2.secret&x=1'), 400],
  ])('never echoes it: %s', (_case, error, status) => {
    const { problem } = toProblem(error, { method: 'GET', url });
    expect(problem.status).toBe(status);
    expect(JSON.stringify(problem)).not.toContain('secret');
    expect(JSON.stringify(problem)).not.toContain('no-such-route');
  });

  it('says in its place what a 404 and a 400 mean', () => {
    const request = { method: 'GET', url };
    expect(toProblem(new NotFoundException(`Cannot GET ${url}`), request).problem.detail).toBe(
      'Nothing is served at this path.',
    );
    expect(toProblem(new BadRequestException(`bad ${url}`), request).problem.detail).toBe(
      'The request URL cannot be read (bad percent-encoding or too long a part).',
    );
  });

  it.each([
    ['does not quote it', 'User not found', '/users/u-1'],
    ['quotes another path', 'Moved to /users/u-2', '/users/u-1'],
    // Every detail with a slash in it would quote the path `/`.
    ['quotes only the path /', 'Cannot GET /', '/'],
  ])('keeps a detail that %s', (_case, detail, requested) => {
    const { problem } = toProblem(new NotFoundException(detail), { method: 'GET', url: requested });
    expect(problem.detail).toBe(detail);
  });
});

/** The filter's answer to `error` on a password change, what it recorded and what it logged. */
function answer(error: Error) {
  const observed: string[] = [];
  const sent: { status?: number; body?: string } = {};
  const reply = {
    status: (status: number) => ((sent.status = status), reply),
    headers: () => reply,
    header: () => reply,
    send: (body: string) => ((sent.body = body), reply),
  };
  const request = {
    id: 'req-1',
    method: 'POST',
    url: '/account/password',
    headers: {},
    body: {},
    ip: '127.0.0.1',
    raw: { rawHeaders: [] },
  };
  const host = { switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }) };
  const security = { observe: (type: string) => observed.push(type) };
  const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  try {
    new ProblemDetailsFilter(security as unknown as SecurityEvents).catch(
      error,
      host as unknown as ArgumentsHost,
    );
    return {
      observed,
      status: sent.status,
      type: (JSON.parse(sent.body!) as { type: string }).type,
      logged: logged.mock.calls,
      // The logger's context names the lines' source in the log: `context` in each JSON line.
      loggedBy: logged.mock.contexts.map((logger) => (logger as unknown as { context?: string }).context),
    };
  } finally {
    logged.mockRestore();
  }
}

describe('ProblemDetailsFilter and the log', () => {
  it('logs a bug and an outage with their stacks', () => {
    const bug = new TypeError('x is undefined');
    expect(answer(bug)).toMatchObject({
      status: 500,
      logged: [[{ err: bug, requestId: 'req-1' }, 'Request failed']],
      loggedBy: ['Problems'],
    });
    const outage = new StoreTimeoutError('EventStoreDB', 3500);
    expect(answer(outage)).toMatchObject({ status: 503, logged: [[{ err: outage }, 'Request failed']] });
  });

  it('leaves a 503 it answered on purpose (not ready yet) to its request line: no stack, no second line', () => {
    const notReady = new ServiceUnavailableException({ status: 'error', info: {}, error: {}, details: {} });
    expect(answer(notReady)).toMatchObject({ status: 503, logged: [] });
  });
});

describe('ProblemDetailsFilter and a wrong current password', () => {
  it('answers a wrong one with 400 wrong-password and records it', () => {
    expect(answer(new WrongPasswordError())).toEqual({
      observed: ['OldPasswordRejected.v1'],
      status: 400,
      type: 'wrong-password',
      logged: [],
      loggedBy: [],
    });
  });

  it('answers one changed meanwhile the same, recording no wrong password: the one given was right', () => {
    expect(answer(new PasswordChangedMeanwhileError())).toEqual({
      observed: [],
      status: 400,
      type: 'wrong-password',
      logged: [],
      loggedBy: [],
    });
  });

  it('records a rate limit and a rejected reset token as security events too, and nothing else', () => {
    expect(answer(new TooManyAttemptsError(60, 'Too many attempts')).observed).toEqual(['RateLimited.v1']);
    expect(answer(new InvalidResetTokenError()).observed).toEqual(['ResetTokenRejected.v1']);
    expect(answer(new BadRequestException('no')).observed).toEqual([]);
  });
});

describe('toProblem, error by error', () => {
  const post = { method: 'POST', url: '/customers' };
  const patch = { method: 'PATCH', url: '/users/1' };
  const BEARER = 'Bearer realm="api"';
  const BASIC = 'Basic realm="api", charset="UTF-8"';

  it('challenges a 401 with both schemes, invalid_token for a rejected token, and keeps the challenge out of the body', () => {
    const rejected = toProblem(
      new UnauthorizedException({
        type: 'unauthorized',
        title: 'Unauthorized',
        detail: 'The token is not valid',
        challenge: { invalidToken: true },
      }),
      post,
    );
    expect(rejected).toEqual({
      problem: { type: 'unauthorized', title: 'Unauthorized', status: 401, detail: 'The token is not valid' },
      headers: { 'www-authenticate': [`${BEARER}, error="invalid_token"`, BASIC] },
    });
    expect(toProblem(new UnauthorizedException(), post).headers).toEqual({
      'www-authenticate': [BEARER, BASIC],
    });
  });

  it('names the patch format beside a 415 to a PATCH only, from Nest or from Fastify', () => {
    const nest = new UnsupportedMediaTypeException('The request body must be application/json.');
    const fastify = Object.assign(new Error('unsupported'), {
      statusCode: 415,
      code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
    });
    for (const error of [nest, fastify]) {
      expect(toProblem(error, patch).headers).toEqual({ 'accept-patch': 'application/merge-patch+json' });
      expect(toProblem(error, post).headers).toEqual({});
    }
    // Another refusal of a PATCH is not about its format.
    const tooLarge = Object.assign(new Error('large'), {
      statusCode: 413,
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    });
    for (const error of [new BadRequestException('no'), tooLarge])
      expect(toProblem(error, patch).headers).toEqual({});
    expect(toProblem(fastify, post).problem).toEqual({
      type: 'unsupported-media-type',
      title: 'Unsupported Media Type',
      status: 415,
      detail: 'The Content-Type of the request body is not supported.',
    });
  });

  it('asks a rate-limited client to wait, by a 429 of its own or a limit', () => {
    const limited = new HttpException(
      { type: 'too-many-requests', title: 'Too Many Requests', retryAfter: 30 },
      429,
    );
    expect(toProblem(limited, post).headers).toEqual({ 'retry-after': '30' });
    expect(toProblem(new HttpException({ type: 'too-many-requests' }, 429), post).headers).toEqual({});
    expect(toProblem(new TooManyAttemptsError(60, 'Too many attempts; try again later.'), post)).toEqual({
      problem: {
        type: 'too-many-requests',
        title: 'Too Many Requests',
        status: 429,
        detail: 'Too many attempts; try again later.',
      },
      headers: { 'retry-after': '60' },
    });
  });

  it("takes an HttpException's detail from its text or its messages, and its type and title from its status", () => {
    expect(toProblem(new BadRequestException('page must be an integer'), post).problem).toEqual({
      type: 'bad-request',
      title: 'Bad Request',
      status: 400,
      detail: 'page must be an integer',
    });
    expect(toProblem(new HttpException({ message: ['one', 'two'] }, 400), post).problem.detail).toBe(
      'one; two',
    );
    expect(toProblem(new HttpException({ message: 7 }, 400), post).problem).toEqual({
      type: 'bad-request',
      title: 'Bad Request',
      status: 400,
    });
    expect(toProblem(new HttpException({ other: 'x' }, 418), post).problem).toEqual({
      type: 'bad-request',
      title: "I'm a Teapot",
      status: 418,
    });
    expect(toProblem(new HttpException('odd', 599), post).problem).toEqual({
      type: 'internal-error',
      title: 'Error',
      status: 599,
      detail: 'odd',
    });
  });

  it('answers an HttpException without a body by its status alone', () => {
    expect(toProblem(new HttpException(null as never, 400), post)).toEqual({
      problem: { type: 'bad-request', title: 'Bad Request', status: 400 },
      headers: {},
    });
    expect(toProblem(new HttpException(null as never, 503), post)).toEqual({
      problem: { type: 'service-unavailable', title: 'Service Unavailable', status: 503 },
      headers: { 'retry-after': '5' },
    });
  });

  it('answers a revoked token with 401 and the invalid_token challenge', () => {
    expect(toProblem(new CredentialsRevokedError(), post)).toEqual({
      problem: {
        type: 'unauthorized',
        title: 'Unauthorized',
        status: 401,
        detail: 'The credentials are no longer valid',
      },
      headers: { 'www-authenticate': [`${BEARER}, error="invalid_token"`, BASIC] },
    });
  });

  it('answers broken rules with 422 and the field errors, under the rule that was broken', () => {
    const errors = [{ field: 'age', message: 'age must be an integer from 0 to 150' }];
    expect(toProblem(new ValidationError(errors), post)).toEqual({
      problem: {
        type: 'validation-error',
        title: 'Invalid values',
        status: 422,
        detail: 'age: age must be an integer from 0 to 150',
        errors,
      },
      headers: {},
    });
    expect(toProblem(new ValidationError(errors, 'password-too-common'), post).problem.type).toBe(
      'password-too-common',
    );
  });

  it.each([
    [new InvalidResetTokenError(), 400, 'invalid-reset-token', 'Bad Request'],
    [new NotFoundError('User 7'), 404, 'not-found', 'Not Found'],
    [new ErasedError('User 7', '2026-01-01T00:00:00.000Z'), 410, 'erased', 'Gone'],
    [
      new SubjectErasedError({ subject: { kind: 'user', id: '7' }, erasedAt: '2026-01-01T00:00:00.000Z' }),
      410,
      'erased',
      'Gone',
    ],
    [new ForbiddenError('Only the account itself'), 403, 'forbidden', 'Forbidden'],
    [new PreconditionFailedError(3), 412, 'precondition-failed', 'Precondition Failed'],
    [new EmailTakenError(), 409, 'email-taken', 'Conflict'],
    [new AlreadyExistsError('Customer 7'), 409, 'conflict', 'Conflict'],
    [new ConcurrencyConflictError('customer-7'), 409, 'conflict', 'Conflict'],
  ])('answers %p with %i %s, its message the detail', (error, status, type, title) => {
    expect(toProblem(error, post)).toEqual({
      problem: { type, title, status, detail: (error as Error).message },
      headers: {},
    });
  });

  it("maps Fastify's own client errors: size, JSON, and any other 4xx as it is", () => {
    const fastifyError = (statusCode: unknown, code?: string, message?: string) =>
      Object.assign(new Error(message), { statusCode, code, message });
    expect(toProblem(fastifyError(413, 'FST_ERR_CTP_BODY_TOO_LARGE', 'too large'), post).problem).toEqual({
      type: 'payload-too-large',
      title: 'Payload Too Large',
      status: 413,
      detail: 'The request body is larger than 64 KiB.',
    });
    for (const code of ['FST_ERR_CTP_EMPTY_JSON_BODY', 'FST_ERR_CTP_INVALID_JSON_BODY']) {
      expect(toProblem(fastifyError(400, code, 'Body cannot be empty'), post).problem).toEqual({
        type: 'malformed-json',
        title: 'Bad Request',
        status: 400,
        detail: 'The request body is not valid JSON.',
      });
    }
    // The edge's own parser explains itself.
    const nested = Object.assign(new SyntaxError('The JSON is nested more than 32 deep.'), {
      statusCode: 400,
    });
    expect(toProblem(nested, post).problem).toEqual({
      type: 'malformed-json',
      title: 'Bad Request',
      status: 400,
      detail: 'The JSON is nested more than 32 deep.',
    });
    expect(toProblem(fastifyError(431, 'FST_OTHER', 'Header too large'), post).problem).toEqual({
      type: 'bad-request',
      title: 'Request Header Fields Too Large',
      status: 431,
      detail: 'Header too large',
    });
    expect(toProblem({ statusCode: 400 }, post).problem.detail).toBe('Bad Request');
    expect(toProblem({ statusCode: 499 }, post).problem.detail).toBe('Bad request');
  });

  it.each([
    ['a 5xx status', { statusCode: 500, message: 'internal' }],
    ['a status below 400', { statusCode: 302, message: 'moved' }],
    ['a status that is not a number', { statusCode: '400', message: 'text' }],
    ['a thrown string', 'boom'],
    ['null', null],
  ])('answers anything else, such as %s, with 500 and nothing of it', (_case, error) => {
    expect(toProblem(error, post)).toEqual({
      problem: {
        type: 'internal-error',
        title: 'Internal Server Error',
        status: 500,
        detail: 'An unexpected error occurred.',
      },
      headers: {},
    });
  });
});
