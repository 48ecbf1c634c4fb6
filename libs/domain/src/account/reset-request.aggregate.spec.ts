import { specFor } from '../shared/decider.spec-helper';
import { PasswordResetEmailSent, ResetTokenIssued } from './account.events';
import { isUsableResetToken, resetRequestDecider } from './reset-request.aggregate';

const given = specFor(resetRequestDecider);
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 22, 9, minutes)).toISOString();
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const TTL = 30 * 60;

const issue = (minute: number, accountId: string | null = 'a-1') => ({
  type: 'IssueResetToken' as const,
  requestId: 'r-1',
  accountId,
  credentialsVersion: 2,
  tokenHash: HASH_A,
  requestedAt: at(0),
  ttlSeconds: TTL,
  now: at(minute),
});
const issued = (minute: number): ResetTokenIssued => ({
  type: 'ResetTokenIssued.v1',
  data: {
    accountId: 'a-1',
    requestId: 'r-1',
    tokenId: 'r-1',
    tokenHash: HASH_A,
    issuedAt: at(minute),
    expiresAt: at(30),
    credentialsVersion: 2,
  },
});
const sent: PasswordResetEmailSent = {
  type: 'PasswordResetEmailSent.v1',
  data: { accountId: 'a-1', requestId: 'r-1', tokenId: 'r-1', sentAt: at(2) },
};

describe('Reset request', () => {
  it('issues its token once, keeping its hash, the account and its credentials version; expiring from the request', () => {
    given([])
      .when(issue(1))
      .then([issued(1)]);
    given([issued(1)])
      .when(issue(2))
      .then([]);
  });

  it('issues nothing when the address had no account at the request', () => {
    given([]).when(issue(1, null)).then([]);
  });

  it('issues nothing for a request older than the token lifetime', () => {
    given([]).when(issue(30)).then([]);
    given([])
      .when(issue(29))
      .then([{ ...issued(29) }]);
  });

  it('records its e-mail once, and none without a token', () => {
    given([issued(1)])
      .when({ type: 'RecordResetEmailSent', now: at(2) })
      .then([sent]);
    given([issued(1), sent])
      .when({ type: 'RecordResetEmailSent', now: at(3) })
      .then([]);
    given([])
      .when({ type: 'RecordResetEmailSent', now: at(3) })
      .then([]);
  });

  it('takes its own token until it expires, and no other', () => {
    const state = given([issued(1)]).state;
    expect(isUsableResetToken(state, HASH_A, at(29))).toBe(true);
    expect(isUsableResetToken(state, HASH_A, at(30))).toBe(false);
    expect(isUsableResetToken(state, HASH_B, at(5))).toBe(false);
    expect(isUsableResetToken(state, 'abcd', at(5))).toBe(false);
    expect(isUsableResetToken(given([]).state, HASH_A, at(5))).toBe(false);
  });
});
