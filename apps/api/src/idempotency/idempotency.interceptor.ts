import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { from, mergeMap, Observable, of } from 'rxjs';
import type { Principal } from '@chronicle/application';
import { HeldKey, IdempotencyKeys, requestFingerprint } from './idempotency-keys';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const HELD = Symbol('chronicle.idempotencyKey');
type Held = FastifyRequest & { [HELD]?: HeldKey; user?: Principal };

/**
 * Idempotency-Key on every POST and PATCH, after the guard (a key belongs to an account): a held
 * key lets the handler run, and the answer is kept as it is sent (keepAnswers); a kept answer is
 * replayed instead of running the handler. Requests without the header pay nothing.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly keys: IdempotencyKeys) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Held>();
    const header = request.headers[IDEMPOTENCY_KEY_HEADER];
    const account = request.user?.accountId;
    if ((request.method !== 'POST' && request.method !== 'PATCH') || typeof header !== 'string' || !account) {
      return next.handle();
    }
    const fingerprint = requestFingerprint(request.method, request.url, request.body);
    return from(this.keys.begin(account, header, fingerprint)).pipe(
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
 * Keeps the answer of a request that holds its key, before it leaves: a retry that follows finds it.
 * Any other answer passes at once, in the same tick: an async hook would hold every answer back a
 * turn, and the parser's 400 for bytes pipelined behind a request would leave before that request's
 * own answer.
 */
export function keepAnswers(fastify: FastifyInstance): void {
  fastify.addHook('onSend', (request: Held, reply, payload, done) => {
    const held = request[HELD];
    if (held === undefined) return done(null, payload);
    delete request[HELD];
    held.finish(reply.statusCode, reply.getHeaders(), payload).then(
      () => done(null, payload),
      (error: Error) => done(error),
    );
  });
}
