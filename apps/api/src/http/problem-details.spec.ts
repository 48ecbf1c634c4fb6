import {
  ArgumentsHost,
  BadRequestException,
  Logger,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { SecurityEvents } from '@chronicle/application';
import { PasswordChangedMeanwhileError, UnknownEventTypeError, WrongPasswordError } from '@chronicle/domain';
import { StoreTimeoutError } from '@chronicle/event-store';
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

  it('keeps a detail that does not quote it', () => {
    const { problem } = toProblem(new NotFoundException('User not found'), {
      method: 'GET',
      url: '/users/u-1',
    });
    expect(problem.detail).toBe('User not found');
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
    });
  });

  it('answers one changed meanwhile the same, recording no wrong password: the one given was right', () => {
    expect(answer(new PasswordChangedMeanwhileError())).toEqual({
      observed: [],
      status: 400,
      type: 'wrong-password',
      logged: [],
    });
  });
});
