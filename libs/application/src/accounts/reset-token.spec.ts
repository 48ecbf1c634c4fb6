import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { hashResetToken, parseResetToken, resetTokenFor } from './reset-token';

const secret = randomBytes(32);

describe('reset tokens', () => {
  it('name their request and are stored only as a SHA-256 hash', () => {
    const requestId = randomUUID();
    const issued = resetTokenFor(requestId, secret);
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(issued.tokenHash).toBe(hashResetToken(issued.token));
    expect(issued.tokenHash).not.toContain(issued.token);
    expect(parseResetToken(issued.token)).toEqual({ requestId, tokenHash: issued.tokenHash });
  });

  it('are the same for the same request (a retry re-sends the token), another for another request or secret', () => {
    const requestId = randomUUID();
    expect(resetTokenFor(requestId, secret)).toEqual(resetTokenFor(requestId, secret));
    expect(resetTokenFor(requestId.toUpperCase(), secret).tokenHash).toBe(
      resetTokenFor(requestId, secret).tokenHash,
    );
    expect(resetTokenFor(randomUUID(), secret).token.slice(22)).not.toBe(
      resetTokenFor(requestId, secret).token.slice(22),
    );
    expect(resetTokenFor(requestId, randomBytes(32)).token).not.toBe(resetTokenFor(requestId, secret).token);
  });

  it('carry 256 bits after the request id, which only the secret gives', () => {
    const token = resetTokenFor(randomUUID(), secret).token;
    expect(Buffer.from(token, 'base64url').subarray(16)).toHaveLength(32);
  });

  it('are the HMAC-SHA-256 of the request id in lower case: tokens already mailed keep working', () => {
    const requestId = '0192D3A4-5B6C-7D8E-9F00-112233445566';
    const mac = createHmac('sha256', secret).update(`reset-token:${requestId.toLowerCase()}`).digest();
    const token = Buffer.from(resetTokenFor(requestId, secret).token, 'base64url');
    expect(token.subarray(0, 16).toString('hex')).toBe(requestId.replace(/-/g, '').toLowerCase());
    expect(token.subarray(16)).toEqual(mac);
  });

  it('are made only for a request id that is a UUID', () => {
    expect(() => resetTokenFor('r-1', secret)).toThrow(/UUID/);
  });

  it.each([undefined, 42, '', 'short', 'x'.repeat(65), `${'A'.repeat(63)}=`, `${'A'.repeat(63)}+`])(
    'refuses %p',
    (token) => {
      expect(parseResetToken(token)).toBeNull();
    },
  );
});
