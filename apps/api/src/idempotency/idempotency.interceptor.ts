import {
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  RequestMethod,
  type Type,
} from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { MetadataScanner } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { from, mergeMap, Observable, of } from 'rxjs';
import type { Principal } from '@chronicle/application';
import { HeldKey, IdempotencyKeys, requestFingerprint } from './idempotency-keys';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const HELD = Symbol('chronicle.idempotencyKey');
type Held = FastifyRequest & { [HELD]?: HeldKey; user?: Principal };

/** The methods that take an Idempotency-Key: every POST and PATCH, and no other. */
export const takesIdempotencyKey = (method: string): boolean => method === 'POST' || method === 'PATCH';

/**
 * Idempotency-Key on every POST and PATCH, after the guard (a key belongs to an account): a held
 * key lets the handler run, and the answer is kept as it is sent (keepAnswers); a kept answer is
 * replayed instead of running the handler. Bound to the POST and PATCH routes only
 * (withIdempotencyKeys): Nest wraps every route an interceptor is bound to in an rxjs chain and
 * async-context bindings, even where the interceptor only passes; requests without the header pay that.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly keys: IdempotencyKeys) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Held>();
    const header = request.headers[IDEMPOTENCY_KEY_HEADER];
    const account = request.user?.accountId;
    if (typeof header !== 'string' || !account) return next.handle();
    const fingerprint = requestFingerprint(request.method, request.url, request.body);
    return from(this.keys.begin(account, header, fingerprint, request.id)).pipe(
      mergeMap((outcome) => {
        if ('held' in outcome) {
          request[HELD] = outcome.held;
          return next.handle();
        }
        // The route sends it with its own status, which is the kept one: only successes are kept.
        const reply = context.switchToHttp().getResponse<FastifyReply>();
        void reply.headers(outcome.replay.headers);
        return of(outcome.replay.body);
      }),
    );
  }
}

/**
 * Binds the interceptor to every POST and PATCH handler of these controllers, and to no other
 * (called before Nest scans them, as a decorator would be). A GET, the most frequent request,
 * goes through no interceptor chain at all.
 */
export function withIdempotencyKeys<T extends Type[]>(controllers: T): T {
  const scanner = new MetadataScanner();
  for (const controller of controllers) {
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as object;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined || !takesIdempotencyKey(RequestMethod[method])) continue;
      const bound = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined) ?? [];
      // Once, however many apps a process builds (the e2e tests build several).
      if (!bound.includes(IdempotencyInterceptor)) {
        Reflect.defineMetadata(INTERCEPTORS_METADATA, [...bound, IdempotencyInterceptor], handler);
      }
    }
  }
  return controllers;
}

/**
 * Keeps the answer of a request that holds its key, before it leaves: a retry that follows finds it.
 * Any other answer passes at once, in the same tick: an async hook would hold every answer back a
 * turn, and the parser's 400 for bytes pipelined behind a request would leave before that request's
 * own answer. A hook of the POST and PATCH routes only: on a route with no onSend hook, Fastify
 * sends the answer without running any.
 */
export function keepAnswers(fastify: FastifyInstance): void {
  const keep: onSendHookHandler = (request: Held, reply, payload, done) => {
    const held = request[HELD];
    if (held === undefined) return done(null, payload);
    delete request[HELD];
    held.finish(reply.statusCode, reply.getHeaders(), payload).then(
      () => done(null, payload),
      (error: Error) => done(error),
    );
  };
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some(takesIdempotencyKey)) return;
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...own, keep];
  });
}
