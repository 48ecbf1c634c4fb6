import { Decider } from '../shared/decider';
import { DomainError, NotFoundError } from '../shared/domain-error';
import { Initial } from '../shared/event';
import { SessionEvent } from './session.events';

export interface Session {
  exists: true;
  accountId: string;
  sessionId: string;
  /** The session's first token's expiry: no token of the session outlives it. */
  expiresAt: string;
  ended: boolean;
}
export type SessionState = Initial | Session;

/**
 * The credentials the request was authenticated with are no longer the account's (a reset or
 * change came after), or its session has ended: no token is issued (401, like a revoked token).
 */
export class CredentialsRevokedError extends DomainError {
  readonly code = 'credentials-revoked';
  constructor() {
    super('The credentials are no longer valid');
    this.name = 'CredentialsRevokedError';
  }
}

export interface IssueSessionToken {
  type: 'IssueSessionToken';
  accountId: string;
  sessionId: string;
  tokenId: string;
  /** The bearer token the request carried, or null for Basic credentials (a new session). */
  issuedWith: string | null;
  /** The credentials version the request was authenticated against. */
  credentialsVersion: number;
  /** The account's credentials version now. */
  accountCredentialsVersion: number;
  now: string;
  /** now + the token lifetime; lowered to the session's expiry. */
  expiresAt: string;
}

export interface EndSession {
  type: 'EndSession';
  /** The account the token was issued to: another account's session is not found. */
  accountId: string;
  /** The token whose request ends the session. */
  tokenId: string;
  now: string;
}

export type SessionCommand = IssueSessionToken | EndSession;

const earlier = (a: string, b: string): string => (Date.parse(a) <= Date.parse(b) ? a : b);

export function decideSession(command: SessionCommand, state: SessionState): SessionEvent[] {
  if (command.type === 'EndSession') {
    // A signed token names its own account's sessions only; anything else is a forged claim,
    // refused before anything is written.
    if (!state.exists || state.accountId !== command.accountId) throw new NotFoundError('Session');
    if (state.ended) return [];
    return [
      {
        type: 'SessionEnded.v1',
        data: {
          accountId: state.accountId,
          sessionId: state.sessionId,
          endedWith: command.tokenId,
          endedAt: command.now,
          expiresAt: state.expiresAt,
        },
      },
    ];
  }
  // Versions, never clocks: a request authenticated before a reset or change gets no token.
  if (command.accountCredentialsVersion > command.credentialsVersion) throw new CredentialsRevokedError();
  const { accountId, sessionId, tokenId, issuedWith, credentialsVersion } = command;
  const token = (expiresAt: string): SessionEvent => ({
    type: 'SessionTokenIssued.v1',
    data: { accountId, sessionId, tokenId, issuedWith, credentialsVersion, issuedAt: command.now, expiresAt },
  });
  if (issuedWith === null) {
    // A random session id names a fresh stream: anything there is a collision, never a session to join.
    if (state.exists) throw new CredentialsRevokedError();
    return [
      {
        type: 'SessionStarted.v1',
        data: {
          accountId,
          sessionId,
          startedWith: 'basic',
          credentialsVersion,
          startedAt: command.now,
          expiresAt: command.expiresAt,
        },
      },
      token(command.expiresAt),
    ];
  }
  if (!state.exists || state.ended || state.accountId !== accountId) throw new CredentialsRevokedError();
  if (Date.parse(state.expiresAt) <= Date.parse(command.now)) throw new CredentialsRevokedError();
  return [token(earlier(command.expiresAt, state.expiresAt))];
}

/** O(1) per event: a session's state is four values, however many tokens it issued. */
export function evolveSession(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionStarted.v1':
      return {
        exists: true,
        accountId: event.data.accountId,
        sessionId: event.data.sessionId,
        expiresAt: event.data.expiresAt,
        ended: false,
      };
    case 'SessionTokenIssued.v1':
      return state;
    case 'SessionEnded.v1':
      return state.exists ? { ...state, ended: true } : state;
  }
}

export const sessionDecider: Decider<SessionState, SessionCommand, SessionEvent> = {
  initialState: { exists: false },
  decide: decideSession,
  evolve: evolveSession,
};
