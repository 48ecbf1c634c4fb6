import { timingSafeEqual } from 'node:crypto';
import { Decider } from '../shared/decider';
import { Initial } from '../shared/event';
import { PasswordResetEmailSent, ResetTokenIssued } from './account.events';

export type ResetRequestEvent = ResetTokenIssued | PasswordResetEmailSent;

/** One reset request (stream `passwordreset-<requestId>`): its token, issued once, and its e-mail. */
export interface ResetRequest {
  exists: true;
  requestId: string;
  accountId: string;
  tokenHash: string;
  issuedAt: string;
  expiresAt: string;
  credentialsVersion: number;
  mailed: boolean;
}
export type ResetRequestState = Initial | ResetRequest;

/**
 * Issue the token of a request, once. What decides is the request itself: an address that had no
 * account when the request was made, or a request older than the token's lifetime, gets nothing.
 */
export interface IssueResetToken {
  type: 'IssueResetToken';
  requestId: string;
  /** The account that had the address when the request was made; null when none did. */
  accountId: string | null;
  /** The account's credentials version now: the token is void once it changes. */
  credentialsVersion: number;
  /** SHA-256 of the token, which is derived from the request id: a retry brings the same one. */
  tokenHash: string;
  requestedAt: string;
  ttlSeconds: number;
  now: string;
}

export interface RecordResetEmailSent {
  type: 'RecordResetEmailSent';
  now: string;
}

export type ResetRequestCommand = IssueResetToken | RecordResetEmailSent;

export const initialResetRequestState: ResetRequestState = { exists: false };

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Whether a presented token is this request's (compared in constant time) and within its lifetime;
 * the account then decides whether it is still current.
 */
export function isUsableResetToken(state: ResetRequestState, tokenHash: string, now: string): boolean {
  return (
    state.exists && sameHash(state.tokenHash, tokenHash) && Date.parse(now) < Date.parse(state.expiresAt)
  );
}

export function decideResetRequest(
  command: ResetRequestCommand,
  state: ResetRequestState,
): ResetRequestEvent[] {
  switch (command.type) {
    case 'IssueResetToken': {
      // Issued once: a retry after a crash re-sends the token already issued.
      if (state.exists || command.accountId === null) return [];
      const expiresAt = Date.parse(command.requestedAt) + command.ttlSeconds * 1000;
      if (Date.parse(command.now) >= expiresAt) return [];
      return [
        {
          type: 'ResetTokenIssued.v1',
          data: {
            accountId: command.accountId,
            requestId: command.requestId,
            tokenId: command.requestId,
            tokenHash: command.tokenHash,
            issuedAt: command.now,
            expiresAt: new Date(expiresAt).toISOString(),
            credentialsVersion: command.credentialsVersion,
          },
        },
      ];
    }
    case 'RecordResetEmailSent':
      if (!state.exists || state.mailed) return [];
      return [
        {
          type: 'PasswordResetEmailSent.v1',
          data: {
            accountId: state.accountId,
            requestId: state.requestId,
            tokenId: state.requestId,
            sentAt: command.now,
          },
        },
      ];
  }
}

export function evolveResetRequest(state: ResetRequestState, event: ResetRequestEvent): ResetRequestState {
  switch (event.type) {
    case 'ResetTokenIssued.v1':
      return {
        exists: true,
        requestId: event.data.requestId,
        accountId: event.data.accountId,
        tokenHash: event.data.tokenHash,
        issuedAt: event.data.issuedAt,
        expiresAt: event.data.expiresAt,
        credentialsVersion: event.data.credentialsVersion,
        mailed: false,
      };
    case 'PasswordResetEmailSent.v1':
      return state.exists ? { ...state, mailed: true } : state;
  }
}

export const resetRequestDecider: Decider<ResetRequestState, ResetRequestCommand, ResetRequestEvent> = {
  initialState: initialResetRequestState,
  decide: decideResetRequest,
  evolve: evolveResetRequest,
};
