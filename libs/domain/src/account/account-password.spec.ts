import { NotFoundError } from '../shared/domain-error';
import { specFor } from '../shared/decider.spec-helper';
import { accountDecider, InvalidResetTokenError, PasswordChangedMeanwhileError } from './account.aggregate';
import {
  AccountOpened,
  PasswordChanged,
  PasswordReset,
  PasswordResetEmailSent,
  ResetTokenIssued,
  ResetTokensInvalidated,
  AccessTokensRevoked,
} from './account.events';

const given = specFor(accountDecider);
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 22, 9, minutes)).toISOString();
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

const opened: AccountOpened = {
  type: 'AccountOpened.v1',
  data: {
    accountId: 'a-1',
    email: 'ada@example.com',
    userId: 'u-1',
    roles: ['user'],
    passwordHash: 'h0',
    openedAt: at(0),
  },
};
const issued = (
  tokenId: string,
  tokenHash: string,
  minute: number,
  requestId = `r-${tokenId}`,
): ResetTokenIssued => ({
  type: 'ResetTokenIssued.v1',
  data: { accountId: 'a-1', requestId, tokenId, tokenHash, issuedAt: at(minute), expiresAt: at(minute + 30) },
});
const reset = (tokenId: string, minute: number, credentialsVersion = 1): PasswordReset => ({
  type: 'PasswordReset.v1',
  data: { accountId: 'a-1', tokenId, passwordHash: 'h1', resetAt: at(minute), credentialsVersion },
});
const changed = (minute: number, credentialsVersion = 1): PasswordChanged => ({
  type: 'PasswordChanged.v1',
  data: { accountId: 'a-1', passwordHash: 'h2', changedAt: at(minute), credentialsVersion },
});
const resetWith = (tokenHash: string, minute: number) => ({
  type: 'ResetPassword' as const,
  tokenHash,
  passwordHash: 'h1',
  now: at(minute),
});

describe('Account: password reset', () => {
  it('issues a reset token, keeping only its hash and expiry', () => {
    given([opened])
      .when({
        type: 'IssueResetToken',
        requestId: 'r-t1',
        tokenId: 't1',
        tokenHash: HASH_A,
        now: at(1),
        expiresAt: at(31),
      })
      .then([issued('t1', HASH_A, 1)]);
  });

  it('records the e-mail of a request once', () => {
    const sent: PasswordResetEmailSent = {
      type: 'PasswordResetEmailSent.v1',
      data: { accountId: 'a-1', requestId: 'r-t1', tokenId: 't1', sentAt: at(2) },
    };
    const command = { type: 'RecordResetEmailSent' as const, requestId: 'r-t1', tokenId: 't1', now: at(2) };
    given([opened, issued('t1', HASH_A, 1)])
      .when(command)
      .then([sent]);
    given([opened, issued('t1', HASH_A, 1), sent])
      .when(command)
      .then([]);
  });

  it('resets the password with a valid token', () => {
    given([opened, issued('t1', HASH_A, 1)])
      .when(resetWith(HASH_A, 5))
      .then([reset('t1', 5)]);
  });

  it('refuses a token a second time: it was used', () => {
    given([opened, issued('t1', HASH_A, 1), reset('t1', 5)])
      .when(resetWith(HASH_A, 6))
      .thenThrows(InvalidResetTokenError);
  });

  it('refuses a used token even when the reset is stamped before the token was issued', () => {
    // Clock skew between processes: the password-changed rule does not void it, only "used" does.
    given([opened, issued('t1', HASH_A, 5), reset('t1', 4)])
      .when(resetWith(HASH_A, 6))
      .thenThrows(InvalidResetTokenError);
  });

  it('refuses an expired token, and accepts it up to the last moment', () => {
    given([opened, issued('t1', HASH_A, 1)])
      .when(resetWith(HASH_A, 31))
      .thenThrows(InvalidResetTokenError);
    given([opened, issued('t1', HASH_A, 1)])
      .when(resetWith(HASH_A, 30))
      .then([reset('t1', 30)]);
  });

  it('tells the client only that the token is invalid', () => {
    given([opened]).when(resetWith(HASH_A, 5)).thenFails(InvalidResetTokenError, {
      code: 'invalid-reset-token',
      name: 'InvalidResetTokenError',
      message: 'The reset token is invalid or has expired',
    });
  });

  it('refuses a presented hash of another length without comparing it', () => {
    given([opened, issued('t1', HASH_A, 1)])
      .when(resetWith('abcd', 5))
      .thenThrows(InvalidResetTokenError);
  });

  it('refuses an unknown token and any token of an unknown account', () => {
    given([opened, issued('t1', HASH_A, 1)])
      .when(resetWith(HASH_B, 5))
      .thenThrows(InvalidResetTokenError);
    given([]).when(resetWith(HASH_A, 5)).thenThrows(InvalidResetTokenError);
  });

  it('voids older tokens once another one has reset the password', () => {
    const history = [opened, issued('t1', HASH_A, 1), issued('t2', HASH_B, 2), reset('t2', 3)];
    given(history).when(resetWith(HASH_A, 4)).thenThrows(InvalidResetTokenError);
  });

  it('voids outstanding tokens when the password is changed', () => {
    given([opened, issued('t1', HASH_A, 1), changed(2)])
      .when(resetWith(HASH_A, 3))
      .thenThrows(InvalidResetTokenError);
  });

  it('voids a token issued at the very instant of a change', () => {
    given([opened, issued('t1', HASH_A, 2), changed(2)])
      .when(resetWith(HASH_A, 3))
      .thenThrows(InvalidResetTokenError);
  });

  it('keeps a token issued after a change usable', () => {
    given([opened, changed(1), issued('t1', HASH_A, 2)])
      .when(resetWith(HASH_A, 3))
      .then([reset('t1', 3, 2)]);
  });

  it('changes the password of an open account only', () => {
    given([opened])
      .when({ type: 'ChangePassword', passwordHash: 'h2', verifiedPasswordHash: 'h0', now: at(2) })
      .then([changed(2)]);
    given([])
      .when({ type: 'ChangePassword', passwordHash: 'h2', verifiedPasswordHash: 'h0', now: at(2) })
      .thenThrows(NotFoundError);
  });

  it('changes the password only while the one the caller proved is current, whatever else was written', () => {
    given([opened, issued('t1', HASH_A, 1)])
      .when({ type: 'ChangePassword', passwordHash: 'h2', verifiedPasswordHash: 'h0', now: at(3) })
      .then([changed(3)]);
    given([opened, changed(2)])
      .when({ type: 'ChangePassword', passwordHash: 'h3', verifiedPasswordHash: 'h0', now: at(3) })
      .thenThrows(PasswordChangedMeanwhileError);
  });

  it('gives every reset and change the next credentials version, whatever the clocks say', () => {
    expect(given([opened]).state).toMatchObject({ credentialsVersion: 0 });
    expect(given([opened, issued('t1', HASH_A, 1), reset('t1', 5)]).state).toMatchObject({
      passwordHash: 'h1',
      credentialsVersion: 1,
    });
    // The second change's clock ran behind the first's: the version still goes up.
    given([opened, changed(7)])
      .when({ type: 'ChangePassword', passwordHash: 'h3', verifiedPasswordHash: 'h2', now: at(3) })
      .then([{ ...changed(3, 2), data: { ...changed(3, 2).data, passwordHash: 'h3' } }]);
    expect(given([opened, changed(7), changed(3, 2)]).state).toMatchObject({ credentialsVersion: 2 });
  });

  it('counts versions for resets and changes stored before events carried them', () => {
    const { credentialsVersion: _dropped, ...legacy } = changed(7).data;
    const old: PasswordChanged = { type: 'PasswordChanged.v1', data: legacy };
    expect(given([opened, old, old]).state).toMatchObject({ credentialsVersion: 2 });
    const revokedBefore: AccessTokensRevoked = {
      type: 'AccessTokensRevoked.v1',
      data: { accountId: 'a-1', changeId: 'c-1', revokedBefore: at(9) },
    };
    expect(given([opened, old, revokedBefore]).state).toMatchObject({ credentialsVersion: 1 });
  });

  describe('completing a change (the saga)', () => {
    const invalidated: ResetTokensInvalidated = {
      type: 'ResetTokensInvalidated.v1',
      data: { accountId: 'a-1', changeId: 'c-1', tokenIds: ['t1'] },
    };
    const revoked: AccessTokensRevoked = {
      type: 'AccessTokensRevoked.v1',
      data: { accountId: 'a-1', changeId: 'c-1', revokedBefore: at(3) },
    };
    const complete = { type: 'CompletePasswordChange' as const, changeId: 'c-1', changedAt: at(3) };

    it('invalidates the other outstanding tokens and revokes access tokens, once', () => {
      const history = [opened, issued('t1', HASH_A, 1), issued('t2', HASH_B, 2), reset('t2', 3)];
      given(history).when(complete).then([invalidated, revoked]);
      given([...history, invalidated, revoked])
        .when(complete)
        .then([]);
    });

    it('invalidates tokens issued up to the change, not after it, and not used ones', () => {
      const history = [
        opened,
        issued('t1', HASH_A, 1),
        reset('t1', 2),
        issued('t2', HASH_B, 3),
        issued('t3', 'c'.repeat(64), 4),
      ];
      given(history)
        .when({ ...complete, changedAt: at(3) })
        .then([{ ...invalidated, data: { ...invalidated.data, tokenIds: ['t2'] } }, revoked]);
    });

    it('records the notice e-mail once', () => {
      const command = { type: 'RecordPasswordChangeNotice' as const, changeId: 'c-1', now: at(4) };
      const sent = {
        type: 'PasswordChangeNoticeSent.v1' as const,
        data: { accountId: 'a-1', changeId: 'c-1', sentAt: at(4) },
      };
      given([opened, changed(3)])
        .when(command)
        .then([sent]);
      given([opened, changed(3), sent])
        .when(command)
        .then([]);
    });
  });
});
