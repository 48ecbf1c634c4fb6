import { randomBytes } from 'node:crypto';
import { ChronicleConfig } from '@chronicle/config';
import { HmacAccessTokenCodec, VERIFIED_TOKENS_MAX_ENTRIES } from './hmac-access-token-codec';

describe('HmacAccessTokenCodec', () => {
  const codec = (secret = randomBytes(32)) =>
    new HmacAccessTokenCodec({ tokenSecret: secret } as ChronicleConfig);
  const claims = {
    accountId: 'a-1',
    tokenId: 't-1',
    issuedAt: 1_700_000_000_000,
    expiresAt: 1_700_003_600_000,
  };

  it('verifies what it signed', () => {
    const subject = codec();
    expect(subject.verify(subject.sign(claims))).toEqual(claims);
  });

  it('rejects a token signed under another secret', () => {
    expect(codec().verify(codec().sign(claims))).toBeNull();
  });

  it('rejects tampered claims and signatures', () => {
    const subject = codec();
    const token = subject.sign(claims);
    const [prefix, body, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify(['admin', 't-1', 1, 9_999_999_999])).toString('base64url');
    expect(subject.verify(`${prefix}.${forged}.${signature}`)).toBeNull();
    // One bit flipped in the MAC: replacing its last characters left it unchanged once in ~900 runs.
    const mac = Buffer.from(signature, 'base64url');
    mac[0] ^= 1;
    expect(subject.verify(`${prefix}.${body}.${mac.toString('base64url')}`)).toBeNull();
    expect(subject.verify(`${prefix}.${body}`)).toBeNull();
    expect(subject.verify(`${token}.extra`)).toBeNull();
  });

  it.each(['', 'garbage', 'ct1.', 'ct1..', 'Bearer x', 'ct1.e30.AAAA'])(
    'rejects malformed token %p',
    (token) => {
      expect(codec().verify(token)).toBeNull();
    },
  );

  it('remembers verified tokens without letting a caller change the claims', () => {
    const subject = codec();
    const token = subject.sign(claims);
    const first = subject.verify(token);
    if (first === null) throw new Error('expected claims');
    first.accountId = 'admin';
    const mac = jest.spyOn(subject as unknown as { mac: (body: string) => Buffer }, 'mac');

    expect(subject.verify(token)).toEqual(claims);
    expect(mac).not.toHaveBeenCalled();
  });

  it('keeps at most VERIFIED_TOKENS_MAX_ENTRIES tokens, and no token that failed', () => {
    const subject = codec();
    const tokens = Array.from({ length: VERIFIED_TOKENS_MAX_ENTRIES + 1 }, (_, i) =>
      subject.sign({ ...claims, tokenId: `t-${i}` }),
    );
    for (const token of tokens) subject.verify(token);
    subject.verify(`${tokens[0]}x`);
    const memo = (subject as unknown as { verified: Map<string, unknown> }).verified;

    expect(memo.size).toBe(VERIFIED_TOKENS_MAX_ENTRIES);
    expect(memo.has(tokens[0])).toBe(false);
    expect(memo.has(tokens[VERIFIED_TOKENS_MAX_ENTRIES])).toBe(true);
  });
});
