import { timingSafeEqual } from 'node:crypto';
import { AlreadyExistsError, DomainError, NotFoundError, ValidationError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { checkEmail, isFieldError } from '../shared/values';
import { AccountEvent, PasswordChanged, PasswordReset, Role } from './account.events';

export interface ResetToken {
  hash: string;
  issuedAt: string;
  expiresAt: string;
  used: boolean;
}

export interface Account {
  exists: true;
  id: string;
  email: string;
  userId: string;
  roles: Role[];
  passwordHash: string;
  /**
   * Incremented by every reset and change: tokens and requests authenticated against an older
   * version are revoked. Versions, not instants, so that no host's clock decides.
   */
  credentialsVersion: number;
  /** When the password last changed: reset tokens issued before it are void. */
  passwordChangedAt: string | null;
  resetTokens: ReadonlyMap<string, ResetToken>;
  /** Reset requests whose e-mail went out. */
  resetRequestsMailed: ReadonlySet<string>;
  /** Password changes whose tokens were invalidated and revoked. */
  changesCompleted: ReadonlySet<string>;
  /** Password changes whose notice e-mail went out. */
  changesNotified: ReadonlySet<string>;
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

export interface IssueResetToken {
  type: 'IssueResetToken';
  requestId: string;
  tokenId: string;
  tokenHash: string;
  now: string;
  expiresAt: string;
}

export interface RecordResetEmailSent {
  type: 'RecordResetEmailSent';
  requestId: string;
  tokenId: string;
  now: string;
}

export interface ResetPassword {
  type: 'ResetPassword';
  /** SHA-256 of the token the client presented. */
  tokenHash: string;
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

/** The saga's follow-up to a PasswordReset or PasswordChanged event with id `changeId`. */
export interface CompletePasswordChange {
  type: 'CompletePasswordChange';
  changeId: string;
  changedAt: string;
}

export interface RecordPasswordChangeNotice {
  type: 'RecordPasswordChangeNotice';
  changeId: string;
  now: string;
}

export type AccountCommand =
  | OpenAccount
  | IssueResetToken
  | RecordResetEmailSent
  | ResetPassword
  | ChangePassword
  | CompletePasswordChange
  | RecordPasswordChangeNotice;

function requireAccount(state: AccountState): Account {
  if (!state.exists) throw new NotFoundError('Account');
  return state;
}

/** A reset token works once, before it expires, and only if the password has not changed since. */
export function isResetTokenUsable(account: Account, token: ResetToken, now: string): boolean {
  if (token.used || Date.parse(now) >= Date.parse(token.expiresAt)) return false;
  return (
    account.passwordChangedAt === null || Date.parse(token.issuedAt) > Date.parse(account.passwordChangedAt)
  );
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
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
    case 'IssueResetToken':
      return [
        {
          type: 'ResetTokenIssued.v1',
          data: {
            accountId,
            requestId: command.requestId,
            tokenId: command.tokenId,
            tokenHash: command.tokenHash,
            issuedAt: command.now,
            expiresAt: command.expiresAt,
          },
        },
      ];
    case 'RecordResetEmailSent':
      if (account.resetRequestsMailed.has(command.requestId)) return [];
      return [
        {
          type: 'PasswordResetEmailSent.v1',
          data: { accountId, requestId: command.requestId, tokenId: command.tokenId, sentAt: command.now },
        },
      ];
    case 'ResetPassword': {
      // Every stored hash is compared, in constant time, so timing tells nothing about which matched.
      let match: string | null = null;
      for (const [tokenId, token] of account.resetTokens) {
        if (sameHash(token.hash, command.tokenHash)) match = tokenId;
      }
      const token = match === null ? undefined : account.resetTokens.get(match);
      if (match === null || !token || !isResetTokenUsable(account, token, command.now)) {
        throw new InvalidResetTokenError();
      }
      return [
        {
          type: 'PasswordReset.v1',
          data: {
            accountId,
            tokenId: match,
            passwordHash: command.passwordHash,
            resetAt: command.now,
            credentialsVersion: account.credentialsVersion + 1,
          },
        },
      ];
    }
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
    case 'CompletePasswordChange': {
      if (account.changesCompleted.has(command.changeId)) return [];
      const changedAt = Date.parse(command.changedAt);
      const outstanding = [...account.resetTokens]
        .filter(([, token]) => !token.used && Date.parse(token.issuedAt) <= changedAt)
        .map(([tokenId]) => tokenId);
      return [
        {
          type: 'ResetTokensInvalidated.v1',
          data: { accountId, changeId: command.changeId, tokenIds: outstanding },
        },
        {
          type: 'AccessTokensRevoked.v1',
          data: { accountId, changeId: command.changeId, revokedBefore: command.changedAt },
        },
      ];
    }
    case 'RecordPasswordChangeNotice':
      if (account.changesNotified.has(command.changeId)) return [];
      return [
        {
          type: 'PasswordChangeNoticeSent.v1',
          data: { accountId, changeId: command.changeId, sentAt: command.now },
        },
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
      passwordChangedAt: null,
      resetTokens: new Map(),
      resetRequestsMailed: new Set(),
      changesCompleted: new Set(),
      changesNotified: new Set(),
    };
  }
  if (!state.exists) return state;
  switch (event.type) {
    // Stored before sessions had streams of their own; tokens of that time no longer verify.
    case 'AccessTokenIssued.v1':
    case 'AccessTokenRevoked.v1':
    case 'AccessTokensRevoked.v1':
      return state;
    case 'ResetTokenIssued.v1':
      return {
        ...state,
        resetTokens: new Map(state.resetTokens).set(event.data.tokenId, {
          hash: event.data.tokenHash,
          issuedAt: event.data.issuedAt,
          expiresAt: event.data.expiresAt,
          used: false,
        }),
      };
    case 'PasswordResetEmailSent.v1':
      return { ...state, resetRequestsMailed: new Set([...state.resetRequestsMailed, event.data.requestId]) };
    case 'PasswordReset.v1': {
      const resetTokens = new Map(state.resetTokens);
      const token = resetTokens.get(event.data.tokenId);
      if (token) resetTokens.set(event.data.tokenId, { ...token, used: true });
      return {
        ...state,
        resetTokens,
        passwordHash: event.data.passwordHash,
        passwordChangedAt: event.data.resetAt,
        credentialsVersion: credentialsVersionAfter(state.credentialsVersion, event),
      };
    }
    case 'PasswordChanged.v1':
      return {
        ...state,
        passwordHash: event.data.passwordHash,
        passwordChangedAt: event.data.changedAt,
        credentialsVersion: credentialsVersionAfter(state.credentialsVersion, event),
      };
    case 'ResetTokensInvalidated.v1':
      return { ...state, changesCompleted: new Set([...state.changesCompleted, event.data.changeId]) };
    case 'PasswordChangeNoticeSent.v1':
      return { ...state, changesNotified: new Set([...state.changesNotified, event.data.changeId]) };
  }
}

export const accountDecider = {
  initialState: initialAccountState,
  decide: decideAccount,
  evolve: evolveAccount,
};
