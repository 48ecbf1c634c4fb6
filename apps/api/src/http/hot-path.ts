import type { INestApplicationContext, Type } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';

/**
 * A route's fast lane, for its hottest request: it answers the common, well-formed,
 * authenticated case itself, as a Fastify preHandler, without Nest's guard, pipes and handler
 * around it. Anything else (bad parameters, missing or wrong credentials, a Basic login not
 * verified moments ago) it leaves alone, and the Nest route answers or refuses it as it always
 * does. So the controller stays the one description of the route, its documentation and its errors.
 */
export interface HotPath {
  /** Sends the response and returns true, or leaves the reply untouched and returns false. */
  serve(request: FastifyRequest, reply: FastifyReply): Promise<boolean>;
}

const HOT_PATH = 'chronicleHotPath';

/** Marks a controller route as served by `hotPath` (a provider) when it can. */
export const HotPathRoute = (hotPath: Type<HotPath>) => RouteConfig({ [HOT_PATH]: hotPath });

/** Gives each route marked with HotPathRoute its fast lane; call before the app's routes register. */
export function installHotPaths(app: INestApplicationContext, fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    const token = (route.config as Record<string, unknown> | undefined)?.[HOT_PATH] as
      Type<HotPath> | undefined;
    if (token === undefined) return;
    const hotPath = app.get(token);
    const serve: preHandlerAsyncHookHandler = async (request, reply) => {
      if (await hotPath.serve(request, reply)) return reply;
    };
    const existing = route.preHandler ?? [];
    route.preHandler = [...(Array.isArray(existing) ? existing : [existing]), serve];
  });
}
