import { DomainEvent } from '../shared/event';

/** `auditor`: reads the history and nothing else, so an auditor account holds no other role. */
export type Role = 'user' | 'admin' | 'auditor';

export type AccountOpened = DomainEvent<
  'AccountOpened.v1',
  { accountId: string; email: string; userId: string; roles: Role[]; passwordHash: string; openedAt: string }
>;

/**
 * An account opened without a usable password (by an admin): an e-mail invites its owner to set
 * one. The event's id names the invitation: its token and its e-mail derive from it, so they are
 * made once whatever happens. The link works until `expiresAt`.
 */
export type AccountInvited = DomainEvent<
  'AccountInvited.v1',
  { accountId: string; invitedAt: string; expiresAt: string }
>;

/** Stored before sessions had streams of their own (SessionTokenIssued.v1); no longer written. */
export type AccessTokenIssued = DomainEvent<
  'AccessTokenIssued.v1',
  { accountId: string; tokenId: string; issuedAt: string; expiresAt: string }
>;

/** Stored before sessions had streams of their own (SessionEnded.v1); no longer written. */
export type AccessTokenRevoked = DomainEvent<
  'AccessTokenRevoked.v1',
  { accountId: string; tokenId: string; revokedAt: string }
>;

/**
 * A reset token was issued for the request `requestId` (its `tokenId`); only its SHA-256 is kept,
 * never the token. `credentialsVersion`: the account's when it was issued (absent from the events
 * older builds wrote into account streams, which nothing reads any more).
 */
export type ResetTokenIssued = DomainEvent<
  'ResetTokenIssued.v1',
  {
    accountId: string;
    requestId: string;
    tokenId: string;
    tokenHash: string;
    issuedAt: string;
    expiresAt: string;
    credentialsVersion: number;
  }
>;

export type PasswordResetEmailSent = DomainEvent<
  'PasswordResetEmailSent.v1',
  { accountId: string; requestId: string; tokenId: string; sentAt: string }
>;

/** The password was replaced through reset token `tokenId`, which is now used. */
export type PasswordReset = DomainEvent<
  'PasswordReset.v1',
  {
    accountId: string;
    tokenId: string;
    passwordHash: string;
    resetAt: string;
    /** The account's credentials version from now on; absent on events stored before it was. */
    credentialsVersion?: number;
  }
>;

export type PasswordChanged = DomainEvent<
  'PasswordChanged.v1',
  { accountId: string; passwordHash: string; changedAt: string; credentialsVersion?: number }
>;

/**
 * The same password's hash, replaced at a login: the stored one was of the password as sent before
 * passwords were prepared (RFC 8265). The credentials are unchanged: no token is revoked.
 */
export type PasswordRehashed = DomainEvent<
  'PasswordRehashed.v1',
  { accountId: string; passwordHash: string; rehashedAt: string }
>;

/** Reset tokens still outstanding when the password changed (`changeId`: that event's id). */
export type ResetTokensInvalidated = DomainEvent<
  'ResetTokensInvalidated.v1',
  { accountId: string; changeId: string; tokenIds: string[] }
>;

/**
 * Recorded for the audit: tokens of older credentials stopped working with the change itself,
 * by its credentials version (the instant is the writer's clock, never compared).
 */
export type AccessTokensRevoked = DomainEvent<
  'AccessTokensRevoked.v1',
  { accountId: string; changeId: string; revokedBefore: string }
>;

export type PasswordChangeNoticeSent = DomainEvent<
  'PasswordChangeNoticeSent.v1',
  { accountId: string; changeId: string; sentAt: string }
>;

/**
 * The account's person was erased (SubjectErased.v1 of `user-<userId>`): the account is gone, every
 * token of it stops working, and its address may be taken by a new account.
 */
export type AccountClosed = DomainEvent<
  'AccountClosed.v1',
  { accountId: string; userId: string; closedAt: string }
>;

export type AccountEvent =
  | AccountOpened
  | AccountClosed
  | AccountInvited
  | AccessTokenIssued
  | AccessTokenRevoked
  | ResetTokenIssued
  | PasswordResetEmailSent
  | PasswordReset
  | PasswordChanged
  | PasswordRehashed
  | ResetTokensInvalidated
  | AccessTokensRevoked
  | PasswordChangeNoticeSent;

/** Appended with expected revision "no stream": the first account to claim an address owns it. */
export type EmailReserved = DomainEvent<'EmailReserved.v1', { accountId: string }>;

/**
 * As written before reservation streams were keyed: `emailHash` is the plain SHA-256 of the
 * normalised address, which also named its streams. Read as v2 (`reservation`: `email-<emailHash>`).
 */
export type PasswordResetRequestedV1 = DomainEvent<
  'PasswordResetRequested.v1',
  { emailHash: string; requestedAt: string }
>;

/**
 * A reset was asked for an address, whether or not an account has it: the same durable write
 * for every address, so the answer tells nothing. Kept in the address's own request stream.
 * `reservation`: the address's reservation stream, which says which account, if any, had the
 * address when the request was made (named by a keyed hash: see `emailStreamNameFor`).
 */
export type PasswordResetRequested = DomainEvent<
  'PasswordResetRequested.v2',
  { reservation: string; requestedAt: string }
>;

/**
 * Every opened account's address was given a reservation stream named under the key `keyId`
 * (an upgrade from plain SHA-256 names, or a new server secret): `accounts` looked at, `written`
 * reservations added, `conflicts` addresses already reserved for another account.
 */
export type ReservationsKeyed = DomainEvent<
  'ReservationsKeyed.v1',
  { keyId: string; accounts: number; written: number; conflicts: number }
>;

export const accountStreamName = (accountId: string): string => `account-${accountId}`;
export const resetRequestStreamName = (addressHash: string): string => `resetrequest-${addressHash}`;
/** The record of each keying of the reservation streams (ReservationsKeyed.v1). */
export const RESERVATION_KEYS_STREAM = 'reservationkeys';
/** One reset request's token and e-mail, apart from the account, so requests never grow it. */
export const passwordResetStreamName = (requestId: string): string => `passwordreset-${requestId}`;
/** One password change's follow-ups (revocation, notice). */
export const passwordChangeStreamName = (changeId: string): string => `passwordchange-${changeId}`;
