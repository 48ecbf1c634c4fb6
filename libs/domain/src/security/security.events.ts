import { DomainEvent } from '../shared/event';

/**
 * What a security event records of the requests it counts: all of them alike within the minute
 * (the same key), so a flood of one kind from one client is one event with a count.
 */
export interface SecurityEventData {
  /**
   * A keyed hash (HMAC-SHA-256 under a key derived from the server secret) of the normalised
   * e-mail address the request named or authenticated with; null when it named none. Never the
   * address: the same address always gives the same hash, which only the server can compute.
   */
  emailHash: string | null;
  /** The authenticated account, when the request had one. */
  accountId: string | null;
  /** The client's address as the server sees it (TRUST_PROXY decides whether X-Forwarded-For counts). */
  client: string;
  /** The first user agent seen for the key in the minute, cut to 200 characters; null when none was sent. */
  userAgent: string | null;
  /** The method and route template asked for. */
  route: string;
  /** How many requests the event stands for. */
  count: number;
  /** The first and last of them, RFC 3339 UTC, within one minute. */
  firstAt: string;
  lastAt: string;
  /**
   * True for the one event per kind and minute that counts the requests whose keys did not fit
   * the bounded state: their addresses and clients are not kept.
   */
  overflow: boolean;
}

/**
 * Why a Bearer token was refused: `invalid` (malformed, or its signature does not verify: nothing
 * in it can be trusted), `expired`, or `revoked` (a later password reset or change, an ended
 * session, an account that is gone).
 */
export type AccessTokenRejectionReason = 'invalid' | 'expired' | 'revoked';

export interface AccessTokenRejectedData extends SecurityEventData {
  reason: AccessTokenRejectionReason;
  /** The token's id when its signature verified (expired, revoked), else null; never the token. */
  tokenId: string | null;
}

/** A password check failed (Basic credentials). */
export type LoginFailed = DomainEvent<'LoginFailed.v1', SecurityEventData>;
/** A Bearer token was refused (401). */
export type AccessTokenRejected = DomainEvent<'AccessTokenRejected.v1', AccessTokenRejectedData>;
/** A password change named a wrong old password. */
export type OldPasswordRejected = DomainEvent<'OldPasswordRejected.v1', SecurityEventData>;
/** An authenticated account asked for a route its roles do not allow (admin and audit routes). */
export type AccessForbidden = DomainEvent<'AccessForbidden.v1', SecurityEventData>;
/** A limit was reached (429). */
export type RateLimited = DomainEvent<'RateLimited.v1', SecurityEventData>;
/** A reset was tried with an unknown, expired, malformed or used token. */
export type ResetTokenRejected = DomainEvent<'ResetTokenRejected.v1', SecurityEventData>;
/** The audit was read. */
export type AuditRead = DomainEvent<'AuditRead.v1', SecurityEventData>;

export type SecurityEvent =
  | LoginFailed
  | AccessTokenRejected
  | OldPasswordRejected
  | AccessForbidden
  | RateLimited
  | ResetTokenRejected
  | AuditRead;
export type SecurityEventType = SecurityEvent['type'];

/** Security events live in a stream category of their own, one stream per UTC day. */
export const securityStreamName = (at: Date): string => `security-${at.toISOString().slice(0, 10)}`;
