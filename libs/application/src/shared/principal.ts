import { Role } from '@chronicle/domain';
import { AuthProvenance } from '@chronicle/event-store';
import { ANONYMOUS_ACTOR, CommandContext } from './command-context';

/** The authenticated account a request acts for. */
export interface Principal {
  accountId: string;
  userId: string;
  roles: readonly Role[];
  /** How the request authenticated; the access token id when by token. */
  method: 'bearer' | 'basic';
  tokenId?: string;
  /** The account's credentials version the request was authenticated against. */
  credentialsVersion: number;
  /** The session of the access token, when by token. */
  sessionId?: string;
}

export const isAdmin = (principal: Principal): boolean => principal.roles.includes('admin');

/** How a caller authenticated, as its writes record it: the token's id, never the token. */
export const authOf = (principal: Principal | null): AuthProvenance =>
  principal === null
    ? { method: 'none', tokenId: null }
    : { method: principal.method, tokenId: principal.tokenId ?? null };

/** The ids the server and the client gave a request. */
export interface RequestIds {
  /** Made by the server: the correlation id of the request's writes. */
  correlationId: string;
  /** The client's own X-Request-Id, if it sent one. */
  clientRequestId: string | null;
}

/** The one place an HTTP caller becomes the metadata of the events its request writes. */
export const requestContext = (principal: Principal | null, ids: RequestIds): CommandContext => ({
  actor: principal?.accountId ?? ANONYMOUS_ACTOR,
  correlationId: ids.correlationId,
  clientRequestId: ids.clientRequestId,
  auth: authOf(principal),
});
