import { BadRequestException, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { presentedCredentials } from './credentials';
import { AUTH_OPTIONAL, IS_PUBLIC } from './public.decorator';

/** Problem details of a 401; the exception filter turns `challenge` into WWW-Authenticate. */
export interface UnauthorizedProblem {
  type: 'unauthorized';
  title: string;
  detail: string;
  challenge: { invalidToken: boolean };
}

/**
 * Every route needs credentials unless marked @Public(): Bearer (header or access_token) or Basic,
 * exactly one of them per request.
 */
@Injectable()
export class ChronicleAuthGuard extends AuthGuard(['bearer', 'basic']) {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    if (!this.reflector.getAllAndOverride<boolean>(AUTH_OPTIONAL, targets)) return this.authenticate(context);
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (presentedCredentials(context.switchToHttp().getRequest()).count === 0) return true;
    try {
      return await this.authenticate(context);
    } catch (error) {
      if (!(error instanceof UnauthorizedException)) throw error;
      request.authFailure = error;
      return true;
    }
  }

  private async authenticate(context: ExecutionContext): Promise<boolean> {
    const credentials = presentedCredentials(context.switchToHttp().getRequest());
    if (credentials.count > 1) {
      throw new BadRequestException({
        type: 'multiple-credentials',
        title: 'More than one set of credentials',
        detail: 'Send credentials one way only: one Authorization header, or the access_token parameter.',
      });
    }
    if (credentials.count === 0) throw unauthorized('Credentials are required.', false);
    if (!credentials.bearer && !credentials.basic) {
      throw unauthorized('The Authorization scheme must be Bearer or Basic.', false);
    }
    return (await super.canActivate(context)) as boolean;
  }

  override handleRequest<TUser>(
    error: unknown,
    user: TUser | false,
    _info: unknown,
    context: ExecutionContext,
  ): TUser {
    if (error instanceof Error) throw error;
    if (error) throw new Error('Authentication failed');
    if (!user) {
      const { bearer } = presentedCredentials(context.switchToHttp().getRequest());
      throw unauthorized(
        bearer ? 'The access token is invalid, expired or revoked.' : 'The credentials are invalid.',
        bearer,
      );
    }
    return user;
  }
}

/** A request that passed the guard: `user` when authenticated, `authFailure` under OptionalAuth. */
export interface AuthenticatedRequest {
  user?: unknown;
  authFailure?: UnauthorizedException;
}

/** The 401 for a handler that needs credentials on an @OptionalAuth() route. */
export function requireAuthentication(request: AuthenticatedRequest): UnauthorizedException {
  return request.authFailure ?? unauthorized('Credentials are required.', false);
}

function unauthorized(detail: string, invalidToken: boolean): UnauthorizedException {
  const problem: UnauthorizedProblem = {
    type: 'unauthorized',
    title: 'Unauthorized',
    detail,
    challenge: { invalidToken },
  };
  return new UnauthorizedException(problem);
}
