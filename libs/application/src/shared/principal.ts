import { Role } from '@chronicle/domain';

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

export const contextOf = (principal: Principal, correlationId: string) => ({
  actor: principal.accountId,
  correlationId,
});
