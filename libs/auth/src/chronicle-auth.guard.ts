import { BadRequestException, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { presentedCredentials } from './credentials';
import { IS_PUBLIC } from './public.decorator';

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
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
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

function unauthorized(detail: string, invalidToken: boolean): UnauthorizedException {
  const problem: UnauthorizedProblem = {
    type: 'unauthorized',
    title: 'Unauthorized',
    detail,
    challenge: { invalidToken },
  };
  return new UnauthorizedException(problem);
}
