import { specFor } from '../shared/decider.spec-helper';
import { AccessTokensRevoked, PasswordChangeNoticeSent } from './account.events';
import { passwordChangeDecider } from './password-change.aggregate';

const given = specFor(passwordChangeDecider);
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 22, 9, minutes)).toISOString();

const revoked: AccessTokensRevoked = {
  type: 'AccessTokensRevoked.v1',
  data: { accountId: 'a-1', changeId: 'c-1', revokedBefore: at(3) },
};
const noticed: PasswordChangeNoticeSent = {
  type: 'PasswordChangeNoticeSent.v1',
  data: { accountId: 'a-1', changeId: 'c-1', sentAt: at(4) },
};
const revoke = {
  type: 'RevokeAccessTokensBefore' as const,
  accountId: 'a-1',
  changeId: 'c-1',
  changedAt: at(3),
};
const notice = { type: 'RecordPasswordChangeNotice' as const, accountId: 'a-1', changeId: 'c-1', now: at(4) };

describe('Password change follow-ups', () => {
  it('revokes the access tokens up to the change, once', () => {
    given([]).when(revoke).then([revoked]);
    given([revoked]).when(revoke).then([]);
  });

  it('records the notice e-mail once', () => {
    given([revoked]).when(notice).then([noticed]);
    given([revoked, noticed]).when(notice).then([]);
    expect(given([revoked, noticed]).state).toEqual({ exists: true, revoked: true, notified: true });
  });

  it('still revokes after a notice recorded first: each follow-up is done once, in either order', () => {
    given([noticed]).when(revoke).then([revoked]);
    expect(given([noticed]).state).toEqual({ exists: true, revoked: false, notified: true });
  });
});
