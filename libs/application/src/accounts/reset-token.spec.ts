import { randomUUID } from 'node:crypto';
import { hashResetToken, newResetToken, parseResetToken } from './reset-token';

describe('reset tokens', () => {
  it('name their account and are stored only as a SHA-256 hash', () => {
    const accountId = randomUUID();
    const issued = newResetToken(accountId);
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(issued.tokenHash).toBe(hashResetToken(issued.token));
    expect(issued.tokenHash).not.toContain(issued.token);
    expect(parseResetToken(issued.token)).toEqual({ accountId, tokenHash: issued.tokenHash });
  });

  it('carry 256 random bits: two tokens for one account differ in their secret part', () => {
    const accountId = randomUUID();
    const [a, b] = [newResetToken(accountId).token, newResetToken(accountId).token];
    expect(a.slice(0, 21)).toBe(b.slice(0, 21));
    expect(Buffer.from(a, 'base64url').subarray(16).equals(Buffer.from(b, 'base64url').subarray(16))).toBe(
      false,
    );
    expect(Buffer.from(a, 'base64url').subarray(16)).toHaveLength(32);
  });

  it.each([undefined, 42, '', 'short', 'x'.repeat(65), `${'A'.repeat(63)}=`, `${'A'.repeat(63)}+`])(
    'refuses %p',
    (token) => {
      expect(parseResetToken(token)).toBeNull();
    },
  );
});
