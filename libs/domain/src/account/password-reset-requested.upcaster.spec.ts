import { passwordResetRequestedV1ToV2 } from './password-reset-requested.upcaster';

const HASH = 'ab'.repeat(32);

describe('PasswordResetRequested.v1 → v2', () => {
  it('names the versions it maps', () => {
    expect(passwordResetRequestedV1ToV2).toMatchObject({
      from: 'PasswordResetRequested.v1',
      to: 'PasswordResetRequested.v2',
    });
  });

  it("reads the plain hash as the reservation stream it named, keeping the request's time", () => {
    expect(
      passwordResetRequestedV1ToV2.upcast({ emailHash: HASH, requestedAt: '2026-03-01T10:00:00.000Z' }),
    ).toEqual({ reservation: `email-${HASH}`, requestedAt: '2026-03-01T10:00:00.000Z' });
  });

  it('does not change the stored data it is given', () => {
    const stored = { emailHash: HASH, requestedAt: '2026-03-01T10:00:00.000Z' };
    passwordResetRequestedV1ToV2.upcast(stored);
    expect(stored).toEqual({ emailHash: HASH, requestedAt: '2026-03-01T10:00:00.000Z' });
  });
});
