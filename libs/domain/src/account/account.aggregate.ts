import { AlreadyExistsError, DomainError, NotFoundError, ValidationError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { checkEmail, isFieldError } from '../shared/values';
import { AccountEvent, Role } from './account.events';

export interface Account {
  exists: true;
  id: string;
  email: string;
  userId: string;
  roles: Role[];
  passwordHash: string;
  /** Ids of access tokens revoked one by one (DELETE /api/v1/account/tokens/current). */
  revokedTokenIds: ReadonlySet<string>;
  /** Access tokens issued at or before this instant are revoked (set by a password change). */
  accessTokensRevokedBefore: string | null;
  /**
   * Counts the password's resets and changes. A reset token holds the count at its issue and works
   * only while it is unchanged: used once, or overtaken by any change, it is void (no clocks compared).
   */
  credentialsVersion: number;
}
export type AccountState = Initial | Account;
export const initialAccountState: AccountState = { exists: false };

/** Unknown, expired, malformed, used or invalidated: one answer for every reason. */
export class InvalidResetTokenError extends DomainError {
  readonly code = 'invalid-reset-token';
  constructor() {
    super('The reset token is invalid or has expired');
    this.name = 'InvalidResetTokenError';
  }
}

/**
 * The old password was right when it was checked, but the password changed before this change
 * could be written: `old` is no longer the password (the same answer as a wrong one).
 */
export class PasswordChangedMeanwhileError extends DomainError {
  readonly code = 'wrong-password';
  constructor() {
    super('The current password is wrong');
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
  now: string;
}

export interface IssueAccessToken {
  type: 'IssueAccessToken';
  tokenId: string;
  now: string;
  expiresAt: string;
}

export interface RevokeAccessToken {
  type: 'RevokeAccessToken';
  tokenId: string;
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

export type AccountCommand =
  OpenAccount | IssueAccessToken | RevokeAccessToken | ResetPassword | ChangePassword;

function requireAccount(state: AccountState): Account {
  if (!state.exists) throw new NotFoundError('Account');
  return state;
}

export function decideAccount(command: AccountCommand, state: AccountState): AccountEvent[] {
  if (command.type === 'OpenAccount') {
    if (state.exists) throw new AlreadyExistsError(`Account ${command.accountId}`);
    const email = checkEmail('email', command.email);
    if (isFieldError(email)) throw new ValidationError([email]);
    const roles: Role[] = command.roles.includes('user') ? command.roles : ['user', ...command.roles];
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
    ];
  }
  if (command.type === 'ResetPassword' && !state.exists) throw new InvalidResetTokenError();
  const account = requireAccount(state);
  const accountId = account.id;
  switch (command.type) {
    case 'IssueAccessToken':
      return [
        {
          type: 'AccessTokenIssued.v1',
          data: { accountId, tokenId: command.tokenId, issuedAt: command.now, expiresAt: command.expiresAt },
        },
      ];
    case 'RevokeAccessToken':
      if (account.revokedTokenIds.has(command.tokenId)) return [];
      return [
        {
          type: 'AccessTokenRevoked.v1',
          data: { accountId, tokenId: command.tokenId, revokedAt: command.now },
        },
      ];
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
          },
        },
      ];
    case 'ChangePassword':
      // Only the credentials matter: other writes to the account (token issues) never stop it.
      if (account.passwordHash !== command.verifiedPasswordHash) throw new PasswordChangedMeanwhileError();
      return [
        {
          type: 'PasswordChanged.v1',
          data: { accountId, passwordHash: command.passwordHash, changedAt: command.now },
        },
      ];
  }
}

const later = (current: string | null, candidate: string): string =>
  current !== null && Date.parse(current) >= Date.parse(candidate) ? current : candidate;

export function evolveAccount(state: AccountState, event: AccountEvent): AccountState {
  if (event.type === 'AccountOpened.v1') {
    return {
      exists: true,
      id: event.data.accountId,
      email: event.data.email,
      userId: event.data.userId,
      roles: event.data.roles,
      passwordHash: event.data.passwordHash,
      revokedTokenIds: new Set(),
      accessTokensRevokedBefore: null,
      credentialsVersion: 0,
    };
  }
  if (!state.exists) return state;
  switch (event.type) {
    case 'AccessTokenIssued.v1':
      return state;
    case 'AccessTokenRevoked.v1':
      return { ...state, revokedTokenIds: new Set([...state.revokedTokenIds, event.data.tokenId]) };
    case 'PasswordReset.v1':
      return {
        ...state,
        passwordHash: event.data.passwordHash,
        credentialsVersion: state.credentialsVersion + 1,
        accessTokensRevokedBefore: later(state.accessTokensRevokedBefore, event.data.resetAt),
      };
    case 'PasswordChanged.v1':
      return {
        ...state,
        passwordHash: event.data.passwordHash,
        credentialsVersion: state.credentialsVersion + 1,
        accessTokensRevokedBefore: later(state.accessTokensRevokedBefore, event.data.changedAt),
      };
    // The reset requests' and password changes' follow-ups, kept in streams of their own since;
    // those an older build wrote here change nothing the account decides on.
    case 'ResetTokenIssued.v1':
    case 'PasswordResetEmailSent.v1':
    case 'ResetTokensInvalidated.v1':
    case 'PasswordChangeNoticeSent.v1':
      return state;
    case 'AccessTokensRevoked.v1':
      return {
        ...state,
        accessTokensRevokedBefore: later(state.accessTokensRevokedBefore, event.data.revokedBefore),
      };
  }
}

export const accountDecider = {
  initialState: initialAccountState,
  decide: decideAccount,
  evolve: evolveAccount,
};
