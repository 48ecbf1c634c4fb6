import { MethodNotAllowedException } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem, toProblem } from './problem-details';

/**
 * RFC 9110 §15.5.6 and §9.3.7: a known path asked with a method it does not offer answers 405
 * with `Allow`, and `OPTIONS` on it answers 204 with `Allow`. The methods come from the router
 * itself: the methods every route was registered with (onRoute), tried against the request's path
 * (findRoute), so a route added later is covered without a list to keep.
 */
export class AllowedMethods {
  /** Every method some route offers, in the order first registered; OPTIONS is answered here. */
  private readonly methods = new Set<string>();

  /** Must run before the routes are registered: it learns their methods as they are added. */
  constructor(private readonly fastify: FastifyInstance) {
    fastify.addHook('onRoute', (route) => {
      for (const method of ([] as string[]).concat(route.method)) {
        if (method !== 'OPTIONS') this.methods.add(method);
      }
    });
  }

  /** The methods `url`'s path offers, OPTIONS last; empty when no route has that path. */
  of(url: string): string[] {
    const offered: string[] = [];
    for (const method of this.methods) {
      if (this.fastify.findRoute({ method: method, url }) !== null) offered.push(method);
    }
    if (offered.length > 0) offered.push('OPTIONS');
    return offered;
  }

  /**
   * OPTIONS (not a CORS preflight): 204 with Allow on a known path. Returns whether it answered;
   * if not, the request goes on to the app's 404.
   */
  answerOptions(request: FastifyRequest, reply: FastifyReply): boolean {
    const allow = this.of(request.url);
    if (allow.length === 0) return false;
    void reply.status(204).header('allow', allow.join(', ')).send();
    return true;
  }

  /**
   * A request no route took: 405 with Allow when its path is known under other methods. Returns
   * whether it answered; if not, the request goes on to the app's 404.
   */
  answerUnoffered(request: FastifyRequest, reply: FastifyReply): boolean {
    const allow = this.of(request.url);
    if (allow.length === 0) return false;
    const rendered = toProblem(
      new MethodNotAllowedException({
        type: 'method-not-allowed',
        title: 'Method Not Allowed',
        detail: `This resource does not offer ${request.method}; it offers ${allow.join(', ')}.`,
      }),
      request,
    );
    rendered.headers.allow = allow.join(', ');
    sendProblem(reply, rendered);
    return true;
  }
}
