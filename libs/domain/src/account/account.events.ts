import { DomainEvent } from '../shared/event';

export type Role = 'user' | 'admin';

export type AccountOpened = DomainEvent<
  'AccountOpened.v1',
  { accountId: string; email: string; userId: string; roles: Role[]; passwordHash: string; openedAt: string }
>;

/** Access tokens are signed, not stored: the event keeps only the token's id and lifetime. */
export type AccessTokenIssued = DomainEvent<
  'AccessTokenIssued.v1',
  { accountId: string; tokenId: string; issuedAt: string; expiresAt: string }
>;

export type AccessTokenRevoked = DomainEvent<
  'AccessTokenRevoked.v1',
  { accountId: string; tokenId: string; revokedAt: string }
>;

export type AccountEvent = AccountOpened | AccessTokenIssued | AccessTokenRevoked;

/** Appended with expected revision "no stream": the first account to claim an address owns it. */
export type EmailReserved = DomainEvent<'EmailReserved.v1', { accountId: string }>;

export const accountStreamName = (accountId: string): string => `account-${accountId}`;
