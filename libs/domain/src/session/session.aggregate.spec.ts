import { NotFoundError } from '../shared/domain-error';
import { specFor } from '../shared/decider.spec-helper';
import { CredentialsRevokedError, IssueSessionToken, sessionDecider } from './session.aggregate';
import { SessionEnded, SessionStarted, SessionTokenIssued } from './session.events';

const given = specFor(sessionDecider);
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 9, minute)).toISOString();

const started: SessionStarted = {
  type: 'SessionStarted.v1',
  data: {
    accountId: 'a-1',
    sessionId: 's-1',
    startedWith: 'basic',
    credentialsVersion: 2,
    startedAt: at(0),
    expiresAt: at(60),
  },
};
const token = (tokenId: string, issuedWith: string | null, minute: number, expiresAt: string) =>
  ({
    type: 'SessionTokenIssued.v1',
    data: {
      accountId: 'a-1',
      sessionId: 's-1',
      tokenId,
      issuedWith,
      credentialsVersion: 2,
      issuedAt: at(minute),
      expiresAt,
    },
  }) satisfies SessionTokenIssued;
const ended: SessionEnded = {
  type: 'SessionEnded.v1',
  data: { accountId: 'a-1', sessionId: 's-1', endedWith: 't-2', endedAt: at(10), expiresAt: at(60) },
};
const issue = (tokenId: string, issuedWith: string | null, minute: number, versions = [2, 2]) =>
  ({
    type: 'IssueSessionToken',
    accountId: 'a-1',
    sessionId: 's-1',
    tokenId,
    issuedWith,
    credentialsVersion: versions[0],
    accountCredentialsVersion: versions[1],
    now: at(minute),
    expiresAt: at(minute + 60),
  }) satisfies IssueSessionToken;

describe('Session', () => {
  it('starts with Basic credentials; its first token sets the expiry of the session', () => {
    given([])
      .when(issue('t-1', null, 0))
      .then([started, token('t-1', null, 0, at(60))]);
  });

  it("mints tokens with a bearer token that expire no later than the session's first", () => {
    given([started, token('t-1', null, 0, at(60))])
      .when(issue('t-2', 't-1', 30))
      .then([token('t-2', 't-1', 30, at(60))]);
    given([started])
      .when({ ...issue('t-2', 't-1', 1), expiresAt: at(20) })
      .then([token('t-2', 't-1', 1, at(20))]);
  });

  it('issues nothing to a request authenticated against older credentials than the account has', () => {
    given([])
      .when(issue('t-1', null, 0, [1, 2]))
      .thenFails(CredentialsRevokedError, {
        name: 'CredentialsRevokedError',
        code: 'credentials-revoked',
        message: 'The credentials are no longer valid',
      });
    given([started])
      .when(issue('t-2', 't-1', 5, [2, 3]))
      .thenThrows(CredentialsRevokedError);
  });

  it('issues nothing in an ended, expired, unknown or foreign session, nor starts one twice', () => {
    given([started, ended])
      .when(issue('t-3', 't-1', 11))
      .thenThrows(CredentialsRevokedError);
    given([started])
      .when(issue('t-3', 't-1', 60))
      .thenThrows(CredentialsRevokedError);
    given([])
      .when(issue('t-3', 't-1', 5))
      .thenThrows(CredentialsRevokedError);
    given([started])
      .when({ ...issue('t-3', 't-1', 5), accountId: 'a-2' })
      .thenThrows(CredentialsRevokedError);
    given([started])
      .when(issue('t-3', null, 5))
      .thenThrows(CredentialsRevokedError);
  });

  it('ends once, naming the token that ended it; ending again changes nothing', () => {
    given([started])
      .when({ type: 'EndSession', accountId: 'a-1', tokenId: 't-2', now: at(10) })
      .then([ended]);
    given([started, ended])
      .when({ type: 'EndSession', accountId: 'a-1', tokenId: 't-2', now: at(11) })
      .then([]);
    given([])
      .when({ type: 'EndSession', accountId: 'a-1', tokenId: 't-2', now: at(11) })
      .thenFails(NotFoundError, { message: 'Session not found' });
  });

  it("does not end another account's session: it is not found, and nothing is written", () => {
    given([started])
      .when({ type: 'EndSession', accountId: 'a-2', tokenId: 't-2', now: at(10) })
      .thenFails(NotFoundError, { message: 'Session not found' });
  });

  it('keeps the same state however many tokens it issued', () => {
    const tokens = Array.from({ length: 1000 }, (_, i) => token(`t-${i}`, 't-0', 1, at(60)));
    expect(given([started, ...tokens]).state).toEqual(given([started]).state);
  });
});
