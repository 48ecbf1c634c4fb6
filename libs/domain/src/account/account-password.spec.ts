import { NotFoundError } from '../shared/domain-error';
import { specFor } from '../shared/decider.spec-helper';
import { accountDecider, InvalidResetTokenError, PasswordChangedMeanwhileError } from './account.aggregate';
import {
  AccessTokensRevoked,
  AccountOpened,
  PasswordChanged,
  PasswordReset,
  ResetTokenIssued,
} from './account.events';

const given = specFor(accountDecider);
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 22, 9, minutes)).toISOString();

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
const reset = (tokenId: string, minute: number, credentialsVersion = 1): PasswordReset => ({
  type: 'PasswordReset.v1',
  data: { accountId: 'a-1', tokenId, passwordHash: 'h1', resetAt: at(minute), credentialsVersion },
});
const changed = (minute: number, credentialsVersion = 1): PasswordChanged => ({
  type: 'PasswordChanged.v1',
  data: { accountId: 'a-1', passwordHash: 'h2', changedAt: at(minute), credentialsVersion },
});
/** A token issued while the account's credentials were at `version`, used at `minute`. */
const resetWith = (tokenId: string, version: number, minute: number) => ({
  type: 'ResetPassword' as const,
  tokenId,
  tokenCredentialsVersion: version,
  passwordHash: 'h1',
  now: at(minute),
});

describe('Account: password reset and change', () => {
  it('resets the password with a token issued at its current credentials', () => {
    given([opened])
      .when(resetWith('t1', 0, 5))
      .then([reset('t1', 5)]);
  });

  it('refuses a token a second time: using it changed the credentials', () => {
    given([opened, reset('t1', 5)])
      .when(resetWith('t1', 0, 6))
      .thenThrows(InvalidResetTokenError);
  });

  it('refuses a used token whatever the clocks say: no instants are compared', () => {
    // The reset is stamped before the token's issue (clock skew): the version still voids it.
    given([opened, reset('t1', 4)])
      .when(resetWith('t1', 0, 3))
      .thenThrows(InvalidResetTokenError);
  });

  it('voids older tokens once another one has reset the password, or the password was changed', () => {
    given([opened, reset('t2', 3)])
      .when(resetWith('t1', 0, 4))
      .thenThrows(InvalidResetTokenError);
    given([opened, changed(2)])
      .when(resetWith('t1', 0, 3))
      .thenThrows(InvalidResetTokenError);
  });

  it('keeps a token issued after a change usable', () => {
    given([opened, changed(1)])
      .when(resetWith('t1', 1, 3))
      .then([reset('t1', 3, 2)]);
  });

  it('tells the client only that the token is invalid, also for an unknown account', () => {
    given([])
      .when(resetWith('t1', 0, 5))
      .thenFails(InvalidResetTokenError, {
        code: 'invalid-reset-token',
        name: 'InvalidResetTokenError',
        message: 'The reset token is invalid or has expired',
      });
  });

  it('does not grow with reset requests: tokens an older build kept here change nothing', () => {
    const oldIssue = {
      type: 'ResetTokenIssued.v1',
      data: {
        accountId: 'a-1',
        requestId: 'r',
        tokenId: 't',
        tokenHash: 'a'.repeat(64),
        issuedAt: at(1),
        expiresAt: at(31),
      },
    } as ResetTokenIssued;
    expect(given([opened, oldIssue, oldIssue]).state).toEqual(given([opened]).state);
  });

  it('changes the password of an open account only', () => {
    given([opened])
      .when({ type: 'ChangePassword', passwordHash: 'h2', verifiedPasswordHash: 'h0', now: at(2) })
      .then([changed(2)]);
    given([])
      .when({ type: 'ChangePassword', passwordHash: 'h2', verifiedPasswordHash: 'h0', now: at(2) })
      .thenThrows(NotFoundError);
  });

  it('changes the password only while the one the caller proved is current', () => {
    given([opened, changed(2)])
      .when({ type: 'ChangePassword', passwordHash: 'h3', verifiedPasswordHash: 'h0', now: at(3) })
      // The answer to a wrong password: a caller learns nothing more from the race.
      .thenFails(PasswordChangedMeanwhileError, {
        name: 'PasswordChangedMeanwhileError',
        code: 'wrong-password',
        message: 'The current password is wrong',
      });
  });

  it('replaces a hash the caller proved with the same password hashed as prepared, keeping the credentials', () => {
    const rehash = {
      type: 'RehashPassword' as const,
      passwordHash: 'h9',
      verifiedPasswordHash: 'h0',
      now: at(4),
    };
    const rehashed = {
      type: 'PasswordRehashed.v1' as const,
      data: { accountId: 'a-1', passwordHash: 'h9', rehashedAt: at(4) },
    };
    given([opened]).when(rehash).then([rehashed]);
    expect(given([opened, rehashed]).state).toMatchObject({ passwordHash: 'h9', credentialsVersion: 0 });
    // Changed (or rehashed) meanwhile: nothing to replace.
    given([opened, changed(2)])
      .when(rehash)
      .then([]);
  });

  it('gives every reset and change the next credentials version, whatever the clocks say', () => {
    expect(given([opened]).state).toMatchObject({ credentialsVersion: 0 });
    expect(given([opened, reset('t1', 5)]).state).toMatchObject({
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
});
