import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CommandContext, Principal, requestContext } from '@chronicle/application';
import { clientRequestIdOf } from './request-id';

/**
 * The metadata context of the events a request writes: who (the authenticated account, or
 * anonymous), how it authenticated and with which token, the server's correlation id and the
 * client's own X-Request-Id beside it.
 */
export const WriteContext = createParamDecorator(
  (_data: unknown, context: ExecutionContext): CommandContext => {
    const request = context.switchToHttp().getRequest<FastifyRequest & { user?: Principal }>();
    return requestContext(request.user ?? null, {
      correlationId: request.id,
      clientRequestId: clientRequestIdOf(request),
    });
  },
);
