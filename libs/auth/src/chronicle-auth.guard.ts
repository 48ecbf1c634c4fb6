import {
  BadRequestException,
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Authenticator } from 'passport';
import { Principal, SecurityEvents } from '@chronicle/application';
import { BearerView, bearerView, credentialStrategies } from './credential.strategies';
import { CredentialVerifier } from './credential-verifier';
import { Credentials, credentialsOf, RequestLike } from './credentials';
import type { Role } from '@chronicle/domain';
import { ALLOWED_ROLES, AUTH_OPTIONAL, DEFAULT_ALLOWED_ROLES, IS_PUBLIC } from './public.decorator';
import { ObservedRequest, securityObservationOf } from './security-observation';
import { TokenRejection } from './token-rejection';

/** Problem details of a 401; the exception filter turns `challenge` into WWW-Authenticate. */
export interface UnauthorizedProblem {
  type: 'unauthorized';
  title: string;
  detail: string;
  challenge: { invalidToken: boolean };
}

type Access = 'public' | 'optional' | 'required';

interface RouteAccess {
  access: Access;
  /** Besides admin, who may call it once authenticated. */
  roles: readonly Role[];
}

/**
 * Every route needs credentials unless marked @Public(): Bearer (header or access_token) or Basic,
 * exactly one of them per request. The guard reads the one parsed credential and hands it to the
 * passport strategy of its scheme, and only that one: no chain of strategies tried in turn. Then
 * it checks the account's roles against the route's (@Allow): authentication, then authorization,
 * in one place and before any pipe, so a caller without the role learns nothing from validation.
 */
@Injectable()
export class ChronicleAuthGuard implements CanActivate {
  /** This app's own passport, so that two apps in one process never share strategies. */
  private readonly passport = new Authenticator();
  private readonly access = new WeakMap<object, RouteAccess>();

  constructor(
    private readonly reflector: Reflector,
    verifier: CredentialVerifier,
    private readonly security: SecurityEvents,
  ) {
    for (const strategy of credentialStrategies(verifier)) this.passport.use(strategy);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { access, roles } = this.accessOf(context);
    if (access === 'public') return true;
    const request = context.switchToHttp().getRequest<ObservedRequest & AuthenticatedRequest>();
    const credentials = credentialsOf(request);
    if (access === 'optional' && credentials.kind === 'none') return true;
    let principal: Principal;
    try {
      principal = await this.authenticate(request, credentials);
    } catch (error) {
      if (credentials.kind === 'basic' && error instanceof UnauthorizedException) {
        this.security.observe('LoginFailed.v1', securityObservationOf(request));
      }
      if (error instanceof TokenRefused) {
        this.security.observe('AccessTokenRejected.v1', {
          ...securityObservationOf(request),
          token: { reason: error.rejection.reason, tokenId: error.rejection.tokenId },
        });
      }
      if (access !== 'optional' || !(error instanceof UnauthorizedException)) throw error;
      request.authFailure = error;
      return true;
    }
    request.user = principal;
    if (!mayCall(principal, roles)) {
      this.security.observe('AccessForbidden.v1', securityObservationOf(request));
      throw forbidden(roles);
    }
    return true;
  }

  private authenticate(request: RequestLike, credentials: Credentials): Promise<Principal> {
    switch (credentials.kind) {
      case 'several':
        throw new BadRequestException({
          type: 'multiple-credentials',
          title: 'More than one set of credentials',
          detail: 'Send credentials one way only: one Authorization header, or one access_token parameter.',
        });
      case 'none':
        throw unauthorized('Credentials are required.');
      case 'unsupported':
        throw unauthorized('The Authorization scheme must be Bearer or Basic.');
      case 'malformed-basic':
        throw unauthorized('The credentials are invalid.');
    }
    // The Bearer strategy sees only the token found here; Basic's reads the same parsed credential.
    const view: BearerView | null = credentials.kind === 'bearer' ? bearerView(credentials.token) : null;
    return new Promise((resolve, reject) => {
      const done = (error: unknown, principal: Principal | false) => {
        if (error) reject(error instanceof Error ? error : new Error('Authentication failed'));
        else if (principal) resolve(principal);
        // A token the verifier refused says why; one the strategy refused unread (empty) is invalid.
        else if (view) reject(new TokenRefused(view.rejection ?? EMPTY_TOKEN));
        else reject(unauthorized('The credentials are invalid.'));
      };
      const middleware = this.passport.authenticate(credentials.kind, { session: false }, done) as (
        request: unknown,
        response: unknown,
        next: (error?: unknown) => void,
      ) => void;
      middleware(view ?? request, undefined, reject);
    });
  }

  /** Read once per handler: the decorators cannot change while the app runs. */
  private accessOf(context: ExecutionContext): RouteAccess {
    const handler = context.getHandler();
    let access = this.access.get(handler);
    if (access === undefined) {
      const targets = [handler, context.getClass()];
      access = {
        access: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)
          ? 'public'
          : this.reflector.getAllAndOverride<boolean>(AUTH_OPTIONAL, targets)
            ? 'optional'
            : 'required',
        roles:
          this.reflector.getAllAndOverride<Role[] | undefined>(ALLOWED_ROLES, targets) ??
          DEFAULT_ALLOWED_ROLES,
      };
      this.access.set(handler, access);
    }
    return access;
  }
}

const EMPTY_TOKEN = new TokenRejection('invalid', null);

/** An admin may call every route; anyone else needs one of the route's roles. */
export const mayCall = (principal: Principal, roles: readonly Role[]): boolean =>
  principal.roles.includes('admin') || roles.some((role) => principal.roles.includes(role));

function forbidden(roles: readonly Role[]): ForbiddenException {
  return new ForbiddenException({
    type: 'forbidden',
    title: 'Forbidden',
    detail:
      roles.length === 0
        ? 'This resource is for administrators only.'
        : `This resource needs one of the roles: admin, ${roles.join(', ')}.`,
  });
}

/** A request that passed the guard: `user` when authenticated, `authFailure` under OptionalAuth. */
export interface AuthenticatedRequest {
  user?: unknown;
  authFailure?: UnauthorizedException;
}

/** The 401 for a handler that needs credentials on an @OptionalAuth() route. */
export function requireAuthentication(request: AuthenticatedRequest): UnauthorizedException {
  return request.authFailure ?? unauthorized('Credentials are required.');
}

function problemOf(detail: string, invalidToken: boolean): UnauthorizedProblem {
  return { type: 'unauthorized', title: 'Unauthorized', detail, challenge: { invalidToken } };
}

/** A 401 for missing, unsupported or wrong credentials (a refused token is TokenRefused). */
function unauthorized(detail: string): UnauthorizedException {
  return new UnauthorizedException(problemOf(detail, false));
}

/** The 401 of a refused Bearer token, carrying why for its security event (the client sees one answer for all). */
class TokenRefused extends UnauthorizedException {
  constructor(readonly rejection: TokenRejection) {
    super(problemOf('The access token is invalid, expired or revoked.', true));
  }
}
