import { SetMetadata } from '@nestjs/common';
import type { Role } from '@chronicle/domain';

export const IS_PUBLIC = 'chronicle:public';

/** The route needs no credentials (health, the unauthenticated password forms). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

export const AUTH_OPTIONAL = 'chronicle:auth-optional';

/**
 * Credentials are checked when sent, but not required: the handler decides. Invalid ones leave
 * the request unauthenticated, with the 401 it would have had kept for the handler to throw.
 */
export const OptionalAuth = () => SetMetadata(AUTH_OPTIONAL, true);

export const ALLOWED_ROLES = 'chronicle:allowed-roles';

/**
 * The roles that may call an authenticated route besides `admin`, which may call every route.
 * Undeclared: `user`. `@Allow()` with no role: administrators only. An `auditor` may call only the
 * routes that name it, so a new route is closed to auditors until it says otherwise.
 */
export const Allow = (...roles: Role[]) => SetMetadata(ALLOWED_ROLES, roles);

/** What an undeclared route allows. */
export const DEFAULT_ALLOWED_ROLES: readonly Role[] = ['user'];
