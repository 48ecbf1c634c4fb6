import { Decider } from '../shared/decider';
import { Initial } from '../shared/event';
import { AccessTokensRevoked, PasswordChangeNoticeSent } from './account.events';

export type PasswordChangeEvent = AccessTokensRevoked | PasswordChangeNoticeSent;

/**
 * The follow-ups of one password change or reset (stream `passwordchange-<changeId>`): the access
 * tokens issued up to it revoked, and the notice e-mail, each recorded once.
 */
export interface PasswordChangeFollowUp {
  exists: true;
  revoked: boolean;
  notified: boolean;
}
export type PasswordChangeState = Initial | PasswordChangeFollowUp;

export interface RevokeAccessTokensBefore {
  type: 'RevokeAccessTokensBefore';
  accountId: string;
  changeId: string;
  changedAt: string;
}

export interface RecordPasswordChangeNotice {
  type: 'RecordPasswordChangeNotice';
  accountId: string;
  changeId: string;
  now: string;
}

export type PasswordChangeCommand = RevokeAccessTokensBefore | RecordPasswordChangeNotice;

export const initialPasswordChangeState: PasswordChangeState = { exists: false };

export function decidePasswordChange(
  command: PasswordChangeCommand,
  state: PasswordChangeState,
): PasswordChangeEvent[] {
  switch (command.type) {
    case 'RevokeAccessTokensBefore':
      if (state.exists && state.revoked) return [];
      return [
        {
          type: 'AccessTokensRevoked.v1',
          data: {
            accountId: command.accountId,
            changeId: command.changeId,
            revokedBefore: command.changedAt,
          },
        },
      ];
    case 'RecordPasswordChangeNotice':
      if (state.exists && state.notified) return [];
      return [
        {
          type: 'PasswordChangeNoticeSent.v1',
          data: { accountId: command.accountId, changeId: command.changeId, sentAt: command.now },
        },
      ];
  }
}

export function evolvePasswordChange(
  state: PasswordChangeState,
  event: PasswordChangeEvent,
): PasswordChangeState {
  const current: PasswordChangeFollowUp = state.exists
    ? state
    : { exists: true, revoked: false, notified: false };
  switch (event.type) {
    case 'AccessTokensRevoked.v1':
      return { ...current, revoked: true };
    case 'PasswordChangeNoticeSent.v1':
      return { ...current, notified: true };
  }
}

export const passwordChangeDecider: Decider<PasswordChangeState, PasswordChangeCommand, PasswordChangeEvent> =
  {
    initialState: initialPasswordChangeState,
    decide: decidePasswordChange,
    evolve: evolvePasswordChange,
  };
