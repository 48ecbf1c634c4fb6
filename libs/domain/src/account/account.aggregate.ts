import { AlreadyExistsError, NotFoundError, ValidationError } from '../shared/domain-error';
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
}
export type AccountState = Initial | Account;
export const initialAccountState: AccountState = { exists: false };

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

export type AccountCommand = OpenAccount | IssueAccessToken | RevokeAccessToken;

function requireAccount(state: AccountState): Account {
  if (!state.exists) throw new NotFoundError('Account');
  return state;
}

export function decideAccount(command: AccountCommand, state: AccountState): AccountEvent[] {
  switch (command.type) {
    case 'OpenAccount': {
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
    case 'IssueAccessToken': {
      const account = requireAccount(state);
      return [
        {
          type: 'AccessTokenIssued.v1',
          data: {
            accountId: account.id,
            tokenId: command.tokenId,
            issuedAt: command.now,
            expiresAt: command.expiresAt,
          },
        },
      ];
    }
    case 'RevokeAccessToken': {
      const account = requireAccount(state);
      if (account.revokedTokenIds.has(command.tokenId)) return [];
      return [
        {
          type: 'AccessTokenRevoked.v1',
          data: { accountId: account.id, tokenId: command.tokenId, revokedAt: command.now },
        },
      ];
    }
  }
}

export function evolveAccount(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'AccountOpened.v1':
      return {
        exists: true,
        id: event.data.accountId,
        email: event.data.email,
        userId: event.data.userId,
        roles: event.data.roles,
        passwordHash: event.data.passwordHash,
        revokedTokenIds: new Set(),
      };
    case 'AccessTokenIssued.v1':
      return state;
    case 'AccessTokenRevoked.v1': {
      if (!state.exists) return state;
      return { ...state, revokedTokenIds: new Set([...state.revokedTokenIds, event.data.tokenId]) };
    }
  }
}

export const accountDecider = {
  initialState: initialAccountState,
  decide: decideAccount,
  evolve: evolveAccount,
};
