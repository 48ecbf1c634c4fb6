import { DomainEvent } from '../shared/event';

/**
 * A session began: Basic credentials (the only way one begins) were exchanged for its first token,
 * whose expiry bounds every token of the session. `credentialsVersion` is the account's credentials
 * version the request was authenticated against.
 */
export type SessionStarted = DomainEvent<
  'SessionStarted.v1',
  {
    accountId: string;
    sessionId: string;
    startedWith: 'basic';
    credentialsVersion: number;
    startedAt: string;
    expiresAt: string;
  }
>;

/**
 * An access token of the session; `issuedWith` is the token id of the bearer token that minted it,
 * or null for the session's first token. Tokens are signed, not stored: no secret is kept here.
 */
export type SessionTokenIssued = DomainEvent<
  'SessionTokenIssued.v1',
  {
    accountId: string;
    sessionId: string;
    tokenId: string;
    issuedWith: string | null;
    credentialsVersion: number;
    issuedAt: string;
    expiresAt: string;
  }
>;

/** Every token of the session stopped working (DELETE /api/v1/account/tokens/current with `endedWith`). */
export type SessionEnded = DomainEvent<
  'SessionEnded.v1',
  { accountId: string; sessionId: string; endedWith: string; endedAt: string; expiresAt: string }
>;

export type SessionEvent = SessionStarted | SessionTokenIssued | SessionEnded;

/** Sessions live in streams of their own: the account's stream never grows with token traffic. */
export const sessionStreamName = (sessionId: string): string => `session-${sessionId}`;
