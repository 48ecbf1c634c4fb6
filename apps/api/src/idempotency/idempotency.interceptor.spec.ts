import {
  CallHandler,
  Controller,
  Delete,
  ExecutionContext,
  Get,
  NestInterceptor,
  Patch,
  Post,
  Put,
  UseInterceptors,
} from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import Fastify, { type RouteOptions } from 'fastify';
import { IdempotencyInterceptor, keepAnswers, withIdempotencyKeys } from './idempotency.interceptor';

class OtherInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle();
  }
}

@Controller('things')
class ThingsController {
  @Get()
  list() {}

  @Post()
  create() {}

  @Patch(':id')
  @UseInterceptors(OtherInterceptor)
  change() {}

  @Put(':id')
  replace() {}

  @Delete(':id')
  remove() {}

  helper() {}
}

const bound = (handler: () => void) => Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown;

describe('withIdempotencyKeys', () => {
  const controllers = withIdempotencyKeys([ThingsController]);
  const prototype = ThingsController.prototype;

  it('binds the interceptor to every POST and PATCH handler, beside the ones they declare', () => {
    expect(controllers).toEqual([ThingsController]);
    expect(bound(prototype.create)).toEqual([IdempotencyInterceptor]);
    expect(bound(prototype.change)).toEqual([OtherInterceptor, IdempotencyInterceptor]);
  });

  it('binds nothing to GET, PUT, DELETE or to a method that is not a route: they run no interceptor chain', () => {
    for (const handler of [prototype.list, prototype.replace, prototype.remove, prototype.helper]) {
      expect(bound(handler)).toBeUndefined();
    }
  });

  it('binds it once however many apps a process builds', () => {
    withIdempotencyKeys([ThingsController]);
    expect(bound(prototype.create)).toEqual([IdempotencyInterceptor]);
    expect(bound(prototype.change)).toEqual([OtherInterceptor, IdempotencyInterceptor]);
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
