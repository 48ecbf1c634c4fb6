import {
  ArgumentsHost,
  CanActivate,
  Catch,
  ExceptionFilter,
  ExecutionContext,
  Injectable,
  RequestMethod,
  type Type,
} from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA, GUARDS_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { MetadataScanner } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { Principal } from '@chronicle/application';
import { HeldKey, IdempotencyKeys, KeptAnswer, requestFingerprint } from './idempotency-keys';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const HELD = Symbol('chronicle.idempotencyKey');
type Held = FastifyRequest & { [HELD]?: HeldKey; user?: Principal };

/** The methods that take an Idempotency-Key: every POST and PATCH, and no other. */
export const takesIdempotencyKey = (method: string): boolean => method === 'POST' || method === 'PATCH';

/**
 * The kept answer to a key sent again, which stops the handler: a guard can only stop it by
 * throwing. ReplayKeptAnswer sends it as it was first sent. The answer (an access token, say) is
 * held in a private field: an error serialiser or a log that meets this error shows none of it.
 */
export class KeptAnswerReplay extends Error {
  readonly #answer: KeptAnswer;

  constructor(answer: KeptAnswer) {
    super('The answer kept for this Idempotency-Key, replayed');
    this.name = 'KeptAnswerReplay';
    this.#answer = answer;
  }

  /** Sends the kept answer with its status, headers and body (only successes are kept). */
  sendTo(reply: FastifyReply): void {
    const { status, headers, body } = this.#answer;
    void reply.status(status).headers(headers).send(body);
  }
}

/**
 * Idempotency-Key on every POST and PATCH, after the authentication guard (a key belongs to an
 * account, and method guards run after global ones): a held key lets the handler run, and the
 * answer is kept as it is sent (keepAnswers); a kept answer is replayed instead of running the
 * handler. A guard, not an interceptor: Nest wraps every route an interceptor is bound to in an
 * rxjs chain and async-context bindings, which were a fifth of a PATCH's CPU without a key
 * (bench/README.md); a guard that has nothing to do returns at once.
 */
@Injectable()
export class IdempotencyGuard implements CanActivate {
  constructor(private readonly keys: IdempotencyKeys) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<Held>();
    const header = request.headers[IDEMPOTENCY_KEY_HEADER];
    const account = request.user?.accountId;
    if (typeof header !== 'string' || !account) return true;
    const fingerprint = requestFingerprint(request.method, request.url, request.body);
    return this.keys.begin(account, header, fingerprint, request.id).then((outcome) => {
      if ('replay' in outcome) throw new KeptAnswerReplay(outcome.replay);
      request[HELD] = outcome.held;
      return true;
    });
  }
}

/** Sends the kept answer the guard stopped the handler with: bound beside the guard, before the problem filter. */
@Catch(KeptAnswerReplay)
export class ReplayKeptAnswer implements ExceptionFilter {
  catch(replay: KeptAnswerReplay, host: ArgumentsHost): void {
    replay.sendTo(host.switchToHttp().getResponse<FastifyReply>());
  }
}

/**
 * Binds the guard and the replay to every POST and PATCH handler of these controllers, and to no
 * other (called before Nest scans them, as a decorator would be). A GET, the most frequent request,
 * goes through neither.
 */
export function withIdempotencyKeys<T extends Type[]>(controllers: T): T {
  const scanner = new MetadataScanner();
  for (const controller of controllers) {
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as object;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined || !takesIdempotencyKey(RequestMethod[method])) continue;
      // Once, however many apps a process builds (the e2e tests build several).
      bindOnce(GUARDS_METADATA, handler, IdempotencyGuard);
      bindOnce(EXCEPTION_FILTERS_METADATA, handler, ReplayKeptAnswer);
    }
  }
  return controllers;
}

function bindOnce(key: string, handler: object, bound: Type): void {
  const already = (Reflect.getMetadata(key, handler) as unknown[] | undefined) ?? [];
  if (!already.includes(bound)) Reflect.defineMetadata(key, [...already, bound], handler);
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
