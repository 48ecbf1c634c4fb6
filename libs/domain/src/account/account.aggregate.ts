import { Decider } from '../shared/decider';
import { AlreadyExistsError, DomainError, NotFoundError, ValidationError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { checkEmail, isFieldError } from '../shared/values';
import { AccountEvent, PasswordChanged, PasswordReset, Role } from './account.events';

export interface Account {
  exists: true;
  id: string;
  email: string;
  userId: string;
  roles: Role[];
  passwordHash: string;
  /**
   * Counts the password's resets and changes. Access tokens, and requests authenticated against an
   * older version, are revoked; a reset token holds the count at its issue and works only while it
   * is unchanged (used once, or overtaken by any change, it is void). Versions, not instants, so
   * that no host's clock decides.
   */
  credentialsVersion: number;
}
/** An account closed by its person's erasure: nothing is decided on it any more. */
export interface ClosedAccount {
  exists: false;
  closedAt: string;
}
export type AccountState = Initial | Account | ClosedAccount;
export const initialAccountState: AccountState = { exists: false };

/** Unknown, expired, malformed, used or invalidated: one answer for every reason. */
export class InvalidResetTokenError extends DomainError {
  readonly code = 'invalid-reset-token';
  constructor() {
    super('The reset token is invalid or has expired');
    this.name = 'InvalidResetTokenError';
  }
}

/** `old` did not match the account's password. */
export class WrongPasswordError extends DomainError {
  readonly code = 'wrong-password';
  constructor() {
    super('The current password is wrong');
    this.name = 'WrongPasswordError';
  }
}

/**
 * The old password was right when it was checked, but the password changed before this change
 * could be written: `old` is no longer the password (the same answer as a wrong one, though no
 * wrong password was tried).
 */
export class PasswordChangedMeanwhileError extends WrongPasswordError {
  constructor() {
    super();
    this.name = 'PasswordChangedMeanwhileError';
  }
}

export interface OpenAccount {
  type: 'OpenAccount';
  accountId: string;
  userId: string;
  email: unknown;
  roles: Role[];
  /** Argon2id hash: hashing is slow and async, so it happens before decide. */
  passwordHash: string;
  /** Set: no one knows the password (hashed from random bytes), an invitation links to setting one. */
  invitationTtlSeconds?: number;
  now: string;
}

/** The token was checked against its reset request (hash, expiry): the account checks it is still current. */
export interface ResetPassword {
  type: 'ResetPassword';
  /** The request the token was issued for. */
  tokenId: string;
  /** The account's credentials version when the token was issued. */
  tokenCredentialsVersion: number;
  passwordHash: string;
  now: string;
}

export interface ChangePassword {
  type: 'ChangePassword';
  passwordHash: string;
  /** The hash the caller's old password was checked against: the change holds only while it is current. */
  verifiedPasswordHash: string;
  now: string;
}

/** The password was proved against `verifiedPasswordHash`: the same password, hashed as prepared. */
export interface RehashPassword {
  type: 'RehashPassword';
  passwordHash: string;
  verifiedPasswordHash: string;
  now: string;
}

/** Closes the account of an erased person; closing a closed account again changes nothing. */
export interface CloseAccount {
  type: 'CloseAccount';
  now: string;
}

export type AccountCommand = OpenAccount | ResetPassword | ChangePassword | RehashPassword | CloseAccount;

function requireAccount(state: AccountState): Account {
  if (!state.exists) throw new NotFoundError('Account');
  return state;
}

export function decideAccount(command: AccountCommand, state: AccountState): AccountEvent[] {
  if (command.type === 'OpenAccount') {
    if (state.exists || 'closedAt' in state) throw new AlreadyExistsError(`Account ${command.accountId}`);
    const email = checkEmail('email', command.email);
    if (isFieldError(email)) throw new ValidationError([email]);
    if (command.roles.includes('auditor') && command.roles.some((role) => role !== 'auditor')) {
      throw new ValidationError([{ field: 'roles', message: 'an auditor holds no other role' }]);
    }
    const roles: Role[] =
      command.roles.includes('user') || command.roles.includes('auditor')
        ? command.roles
        : ['user', ...command.roles];
    return [
      {
        type: 'AccountOpened.v1',
        data: {
          accountId: command.accountId,
          email,
          userId: command.userId,
          roles,
          passwordHash: command.passwordHash,
          openedAt: command.now,
        },
      },
      ...(command.invitationTtlSeconds === undefined
        ? []
        : [
            {
              type: 'AccountInvited.v1' as const,
              data: {
                accountId: command.accountId,
                invitedAt: command.now,
                expiresAt: new Date(
                  Date.parse(command.now) + command.invitationTtlSeconds * 1000,
                ).toISOString(),
              },
            },
          ]),
    ];
  }
  if (command.type === 'CloseAccount' && 'closedAt' in state) return [];
  if (command.type === 'ResetPassword' && !state.exists) throw new InvalidResetTokenError();
  const account = requireAccount(state);
  const accountId = account.id;
  switch (command.type) {
    case 'ResetPassword':
      if (command.tokenCredentialsVersion !== account.credentialsVersion) throw new InvalidResetTokenError();
      return [
        {
          type: 'PasswordReset.v1',
          data: {
            accountId,
            tokenId: command.tokenId,
            passwordHash: command.passwordHash,
            resetAt: command.now,
            credentialsVersion: account.credentialsVersion + 1,
          },
        },
      ];
    case 'ChangePassword':
      // Only the credentials matter: other writes to the account (token issues) never stop it.
      if (account.passwordHash !== command.verifiedPasswordHash) throw new PasswordChangedMeanwhileError();
      return [
        {
          type: 'PasswordChanged.v1',
          data: {
            accountId,
            passwordHash: command.passwordHash,
            changedAt: command.now,
            credentialsVersion: account.credentialsVersion + 1,
          },
        },
      ];
    case 'RehashPassword':
      // Changed or rehashed meanwhile: the hash proved is gone, and nothing is left to do.
      if (account.passwordHash !== command.verifiedPasswordHash) return [];
      return [
        {
          type: 'PasswordRehashed.v1',
          data: { accountId, passwordHash: command.passwordHash, rehashedAt: command.now },
        },
      ];
    case 'CloseAccount':
      return [
        { type: 'AccountClosed.v1', data: { accountId, userId: account.userId, closedAt: command.now } },
      ];
  }
}

/**
 * The credentials version after a reset or change: the event's own, or for those stored before
 * events carried it, one more than the version before. The one rule both the account and the
 * sessions that check tokens apply.
 */
export function credentialsVersionAfter(previous: number, event: PasswordReset | PasswordChanged): number {
  return event.data.credentialsVersion ?? previous + 1;
}

export function evolveAccount(state: AccountState, event: AccountEvent): AccountState {
  if (event.type === 'AccountOpened.v1') {
    return {
      exists: true,
      id: event.data.accountId,
      email: event.data.email,
      userId: event.data.userId,
      roles: event.data.roles,
      passwordHash: event.data.passwordHash,
      credentialsVersion: 0,
    };
  }
  if (!state.exists) return state;
  switch (event.type) {
    case 'PasswordReset.v1':
    case 'PasswordChanged.v1':
      return {
        ...state,
        passwordHash: event.data.passwordHash,
        credentialsVersion: credentialsVersionAfter(state.credentialsVersion, event),
      };
    case 'PasswordRehashed.v1':
      return { ...state, passwordHash: event.data.passwordHash };
    case 'AccountClosed.v1':
      return { exists: false, closedAt: event.data.closedAt };
    // Kept in streams of their own since (sessions, reset requests, password changes): those an
    // older build wrote here change nothing the account decides on, and their tokens no longer verify.
    // The invitation's token lives in its own stream, like a reset request's.
    case 'AccountInvited.v1':
    case 'AccessTokenIssued.v1':
    case 'AccessTokenRevoked.v1':
    case 'AccessTokensRevoked.v1':
    case 'ResetTokenIssued.v1':
    case 'PasswordResetEmailSent.v1':
    case 'ResetTokensInvalidated.v1':
    case 'PasswordChangeNoticeSent.v1':
      return state;
  }
}

export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent> = {
  initialState: initialAccountState,
  decide: decideAccount,
  evolve: evolveAccount,
};
