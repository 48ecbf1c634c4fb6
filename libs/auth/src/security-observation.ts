import type { Principal, SecurityObservation } from '@chronicle/application';
import { clientAddress } from './client-address';
import { credentialsOf, RequestLike } from './credentials';

export interface ObservedRequest extends RequestLike {
  method: string;
  url: string;
  ip?: unknown;
  headers: Record<string, string | string[] | undefined>;
  routeOptions?: { url?: string };
  body?: unknown;
  user?: unknown;
}

/**
 * What a security event keeps of a request: the address it authenticated with (Basic) or named
 * (a reset request's `email`), the account it authenticated as, the client's address, its user
 * agent and the route template (never the URL: it may hold a token).
 */
export function securityObservationOf(request: ObservedRequest): SecurityObservation {
  const credentials = credentialsOf(request);
  const named = (request.body as { email?: unknown } | null | undefined)?.email;
  const userAgent = request.headers['user-agent'];
  return {
    email: credentials.kind === 'basic' ? credentials.email : typeof named === 'string' ? named : null,
    accountId: (request.user as Principal | undefined)?.accountId ?? null,
    client: clientAddress(request),
    userAgent: typeof userAgent === 'string' ? userAgent : null,
    route: `${request.method} ${request.routeOptions?.url ?? 'unrouted'}`,
  };
}
