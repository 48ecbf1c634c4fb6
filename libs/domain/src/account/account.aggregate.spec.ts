import { AlreadyExistsError, NotFoundError, ValidationError } from '../shared/domain-error';
import { specFor } from '../shared/decider.spec-helper';
import { accountDecider, InvalidResetTokenError } from './account.aggregate';
import { AccountClosed, AccountOpened, AccessTokenIssued, AccessTokenRevoked, Role } from './account.events';
import { checkPassword, passwordPolicyError } from './password-policy';

const given = specFor(accountDecider);
const T0 = '2026-11-22T09:15:00.000Z';
const opened: AccountOpened = {
  type: 'AccountOpened.v1',
  data: {
    accountId: 'a-1',
    email: 'Ada@Example.com',
    userId: 'u-1',
    roles: ['user'],
    passwordHash: '$argon2id$hash',
    openedAt: T0,
  },
};
const open = (email: unknown, roles: Role[] = []) => ({
  type: 'OpenAccount' as const,
  accountId: 'a-1',
  userId: 'u-1',
  email,
  roles,
  passwordHash: '$argon2id$hash',
  now: T0,
});
const legacyIssued: AccessTokenIssued = {
  type: 'AccessTokenIssued.v1',
  data: { accountId: 'a-1', tokenId: 't-1', issuedAt: T0, expiresAt: '2026-11-22T10:15:00.000Z' },
};
const legacyRevoked: AccessTokenRevoked = {
  type: 'AccessTokenRevoked.v1',
  data: { accountId: 'a-1', tokenId: 't-1', revokedAt: T0 },
};

describe('Account', () => {
  it('opens an account, always with the user role', () => {
    given([]).when(open(' Ada@Example.com ')).then([opened]);
    given([])
      .when(open('ada@example.com', ['admin']))
      .then([{ ...opened, data: { ...opened.data, email: 'ada@example.com', roles: ['user', 'admin'] } }]);
  });

  it('opens an auditor account with the auditor role alone: it reads, and does nothing else', () => {
    given([])
      .when(open('ada@example.com', ['auditor']))
      .then([{ ...opened, data: { ...opened.data, email: 'ada@example.com', roles: ['auditor'] } }]);
    for (const other of ['user', 'admin'] as const) {
      given([])
        .when(open('ada@example.com', ['auditor', other]))
        .thenFails(ValidationError, {
          errors: [{ field: 'roles', message: 'an auditor holds no other role' }],
        });
    }
  });

  it('opens an invited account with its invitation, valid for the TTL, in one decision', () => {
    given([])
      .when({ ...open(' Ada@Example.com '), invitationTtlSeconds: 7 * 86_400 })
      .then([
        opened,
        {
          type: 'AccountInvited.v1',
          data: { accountId: 'a-1', invitedAt: T0, expiresAt: '2026-11-29T09:15:00.000Z' },
        },
      ]);
  });

  it('refuses an invalid address and a second opening', () => {
    given([])
      .when(open('not an address'))
      .thenFails(ValidationError, { errors: [{ field: 'email', message: 'must be an e-mail address' }] });
    given([opened])
      .when(open('ada@example.com'))
      .thenFails(AlreadyExistsError, { message: 'Account a-1 already exists' });
  });

  it('answers not found for an account with no events', () => {
    given([])
      .when({ type: 'ChangePassword', passwordHash: 'h', verifiedPasswordHash: 'h', now: T0 })
      .thenFails(NotFoundError, { message: 'Account not found' });
  });

  it('holds nothing of the token events stored before sessions had streams of their own', () => {
    expect(given([opened, legacyIssued, legacyRevoked]).state).toEqual(given([opened]).state);
  });
});

describe('password policy', () => {
  it.each([
    ['short', 'must be 8 to 256 characters long'],
    ['x'.repeat(257), 'must be 8 to 256 characters long'],
    ['ADA@example.com', 'must not be the account e-mail address'],
    [12345678, 'must be a string'],
  ])('refuses %p', (password, message) => {
    expect(checkPassword('new', password, 'ada@example.com')).toEqual({ field: 'new', message });
  });

  it('judges a password as prepared (RFC 8265), and refuses control characters', () => {
    // Seven characters once composed (NFC), fourteen as sent in NFD.
    expect(
      checkPassword('new', 'e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301', 'ada@example.com'),
    ).toEqual({
      field: 'new',
      message: 'must be 8 to 256 characters long',
    });
    for (const control of ['\u0000', '\u001b', '\n', '\u009b'])
      expect(checkPassword('new', `a long passphrase${control}`, 'ada@example.com')).toEqual({
        field: 'new',
        message: 'must not contain control characters',
      });
  });

  it.each(['password', 'Password1', '12345678', 'QWERTYUIOP'])(
    'refuses the common password %p',
    (password) => {
      expect(checkPassword('new', password, 'ada@example.com')).toEqual({
        field: 'new',
        message: expect.stringContaining('common'),
      });
    },
  );

  it.each([
    ['password', 'common-password'],
    ['Ada@Example.com', 'password-is-email'],
    ['short', 'validation-error'],
  ])('names the rule %p breaks as its problem type, %s', (password, code) => {
    expect(passwordPolicyError('new', password, 'ada@example.com')).toMatchObject({
      code,
      errors: [{ field: 'new', message: checkPassword('new', password, 'ada@example.com')!.message }],
    });
  });

  it('accepts 8 to 256 characters of anything, counted as characters', () => {
    expect(passwordPolicyError('new', 'correct horse', 'ada@example.com')).toBeNull();
    expect(checkPassword('new', 'correct horse', 'ada@example.com')).toBeNull();
    expect(checkPassword('new', '🔑'.repeat(8), 'ada@example.com')).toBeNull();
    expect(checkPassword('new', 'y'.repeat(256), 'ada@example.com')).toBeNull();
  });
});

describe("Account closed by its person's erasure", () => {
  const T1 = '2026-11-22T11:00:00.000Z';
  const close = { type: 'CloseAccount' as const, now: T1 };
  const closed: AccountClosed = {
    type: 'AccountClosed.v1',
    data: { accountId: opened.data.accountId, userId: opened.data.userId, closedAt: T1 },
  };

  it('closes an open account once, leaving nothing to decide on', () => {
    given([opened]).when(close).then([closed]);
    given([opened, closed]).when(close).then([]);
    expect(given([opened, closed]).state).toEqual({ exists: false, closedAt: T1 });
  });

  it('takes no reset, change or reopening after', () => {
    const reset = {
      type: 'ResetPassword' as const,
      tokenId: 't-1',
      tokenCredentialsVersion: 0,
      passwordHash: opened.data.passwordHash,
      now: T1,
    };
    given([opened, closed]).when(reset).thenFails(InvalidResetTokenError, { code: 'invalid-reset-token' });
    given([opened, closed])
      .when({
        type: 'ChangePassword',
        passwordHash: 'x',
        verifiedPasswordHash: opened.data.passwordHash,
        now: T1,
      })
      .thenFails(NotFoundError, { code: 'not-found' });
    given([opened, closed]).when(open('ada@example.com')).thenFails(AlreadyExistsError, {});
    given([]).when(close).thenFails(NotFoundError, {});
  });
});
