import {
  CanActivate,
  Controller,
  Delete,
  ExecutionContext,
  Get,
  Patch,
  Post,
  Put,
  UseGuards,
} from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA, GUARDS_METADATA, INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import Fastify, { type RouteOptions } from 'fastify';
import type { IdempotencyKeys, KeyOutcome } from './idempotency-keys';
import {
  IdempotencyGuard,
  KeptAnswerReplay,
  keepAnswers,
  ReplayKeptAnswer,
  withIdempotencyKeys,
} from './idempotency.guard';

class OtherGuard implements CanActivate {
  canActivate() {
    return true;
  }
}

@Controller('things')
class ThingsController {
  @Get()
  list() {}

  @Post()
  create() {}

  @Patch(':id')
  @UseGuards(OtherGuard)
  change() {}

  @Put(':id')
  replace() {}

  @Delete(':id')
  remove() {}

  helper() {}
}

const bound = (key: string, handler: () => void) => Reflect.getMetadata(key, handler) as unknown;

describe('withIdempotencyKeys', () => {
  const controllers = withIdempotencyKeys([ThingsController]);
  const prototype = ThingsController.prototype;

  it('binds the guard and the replay to every POST and PATCH handler, after the guards they declare', () => {
    expect(controllers).toEqual([ThingsController]);
    expect(bound(GUARDS_METADATA, prototype.create)).toEqual([IdempotencyGuard]);
    expect(bound(GUARDS_METADATA, prototype.change)).toEqual([OtherGuard, IdempotencyGuard]);
    for (const handler of [prototype.create, prototype.change]) {
      expect(bound(EXCEPTION_FILTERS_METADATA, handler)).toEqual([ReplayKeptAnswer]);
    }
  });

  it('binds no interceptor: a POST or PATCH runs no rxjs chain', () => {
    for (const handler of [prototype.create, prototype.change]) {
      expect(bound(INTERCEPTORS_METADATA, handler)).toBeUndefined();
    }
  });

  it('binds nothing to GET, PUT, DELETE or to a method that is not a route', () => {
    for (const handler of [prototype.list, prototype.replace, prototype.remove, prototype.helper]) {
      expect(bound(GUARDS_METADATA, handler)).toBeUndefined();
      expect(bound(EXCEPTION_FILTERS_METADATA, handler)).toBeUndefined();
    }
  });

  it('binds them once however many apps a process builds', () => {
    withIdempotencyKeys([ThingsController]);
    expect(bound(GUARDS_METADATA, prototype.change)).toEqual([OtherGuard, IdempotencyGuard]);
    expect(bound(EXCEPTION_FILTERS_METADATA, prototype.change)).toEqual([ReplayKeptAnswer]);
  });
});

describe('IdempotencyGuard', () => {
  const kept = { status: 201, headers: { location: '/customers/7' }, body: Buffer.from('{"id":7}') };
  const contextOf = (request: object) =>
    ({ switchToHttp: () => ({ getRequest: () => request }) }) as unknown as ExecutionContext;
  const request = (headers: Record<string, string>, user: object | null = { accountId: 'a-1' }) => ({
    method: 'POST',
    url: '/customers',
    body: { name: 'Ada' },
    id: 'req-1',
    headers,
    user,
  });
  const guardWith = (outcome: KeyOutcome) => {
    const begin = jest.fn(() => Promise.resolve(outcome));
    return { guard: new IdempotencyGuard({ begin } as unknown as IdempotencyKeys), begin };
  };

  it('lets a request without a key, or without an account, through at once, asking nothing', () => {
    const { guard, begin } = guardWith({ replay: kept });
    expect(guard.canActivate(contextOf(request({})))).toBe(true);
    expect(guard.canActivate(contextOf(request({ 'idempotency-key': 'k' }, null)))).toBe(true);
    expect(begin).not.toHaveBeenCalled();
  });

  it('holds a new key for the handler: the account, the key and the request are what it is asked', async () => {
    const held = { finish: jest.fn() };
    const { guard, begin } = guardWith({ held });
    await expect(guard.canActivate(contextOf(request({ 'idempotency-key': 'k' })))).resolves.toBe(true);
    expect(begin).toHaveBeenCalledWith('a-1', 'k', expect.any(String), 'req-1');
  });

  it('stops the handler with the kept answer of a key sent again', async () => {
    const { guard } = guardWith({ replay: kept });
    const replayed = guard.canActivate(contextOf(request({ 'idempotency-key': 'k' })));
    await expect(replayed).rejects.toBeInstanceOf(KeptAnswerReplay);
    const error = await Promise.resolve(replayed).catch((thrown: unknown) => thrown);
    // Whatever logs or serialises the error: none of the answer.
    expect(JSON.stringify({ ...(error as object) })).not.toContain('/customers/7');
    expect(Object.keys(error as object)).toEqual(['name']);
  });

  it('sends the kept answer with its status, headers and body', async () => {
    const fastify = Fastify();
    fastify.get('/', (_request, reply) => {
      const host = { switchToHttp: () => ({ getResponse: () => reply }) };
      new ReplayKeptAnswer().catch(
        new KeptAnswerReplay({ ...kept, headers: { ...kept.headers, 'content-type': 'application/json' } }),
        host as never,
      );
      return reply;
    });
    const answer = await fastify.inject({ method: 'GET', url: '/' });
    expect(answer.statusCode).toBe(201);
    expect(answer.headers).toMatchObject({ location: '/customers/7', 'content-type': 'application/json' });
    expect(answer.body).toBe('{"id":7}');
    await fastify.close();
  });
});

describe('keepAnswers', () => {
  it('adds its onSend hook to the POST and PATCH routes only', async () => {
    const fastify = Fastify();
    keepAnswers(fastify);
    const routes = new Map<string, RouteOptions>();
    // Runs after keepAnswers' own onRoute hook: it sees each route as registered.
    fastify.addHook('onRoute', (route) => void routes.set(`${String(route.method)} ${route.url}`, route));
    const own = (_request: unknown, _reply: unknown, payload: unknown, done: (e: null, p: unknown) => void) =>
      done(null, payload);
    for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const) {
      fastify.route({ method, url: '/things', handler: () => 'ok' });
    }
    fastify.route({ method: 'PATCH', url: '/own', onSend: own, handler: () => 'ok' });
    await fastify.ready();
    const hooks = (key: string) => {
      const onSend = routes.get(key)?.onSend;
      return onSend === undefined ? [] : Array.isArray(onSend) ? onSend : [onSend];
    };
    const keep = hooks('POST /things');
    expect(keep).toHaveLength(1);
    expect(hooks('PATCH /things')).toEqual(keep);
    expect(hooks('PATCH /own')).toEqual([own, ...keep]);
    // No onSend hook at all: Fastify sends their answers without running a hook chain.
    for (const key of ['GET /things', 'PUT /things', 'DELETE /things']) expect(hooks(key)).toEqual([]);
    // Fastify's own hook of the HEAD route it adds beside a GET.
    expect(hooks('HEAD /things')).not.toContain(keep[0]);
    const answer = await fastify.inject({ method: 'POST', url: '/things' });
    expect(answer.body).toBe('ok');
    await fastify.close();
  });
});
