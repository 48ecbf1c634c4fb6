import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'chronicle:public';

/** The route needs no credentials (health, the unauthenticated password forms). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

export const AUTH_OPTIONAL = 'chronicle:auth-optional';

/**
 * Credentials are checked when sent, but not required: the handler decides. Invalid ones leave
 * the request unauthenticated, with the 401 it would have had kept for the handler to throw.
 */
export const OptionalAuth = () => SetMetadata(AUTH_OPTIONAL, true);
