import { createHmac, randomBytes } from 'node:crypto';
import { ChronicleConfig } from '@chronicle/config';
import { HmacAccessTokenCodec, VERIFIED_TOKENS_MAX_ENTRIES } from './hmac-access-token-codec';

describe('HmacAccessTokenCodec', () => {
  const codec = (secret = randomBytes(32)) =>
    new HmacAccessTokenCodec({ tokenSecret: secret } as ChronicleConfig);
  const claims = {
    accountId: 'a-1',
    tokenId: 't-1',
    sessionId: 's-1',
    credentialsVersion: 3,
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
    const forged = Buffer.from(JSON.stringify(['admin', 't-1', 's-1', 9, 1, 9_999_999_999])).toString(
      'base64url',
    );
    expect(subject.verify(`${prefix}.${forged}.${signature}`)).toBeNull();
    // One bit flipped in the MAC: replacing its last characters left it unchanged once in ~900 runs.
    const mac = Buffer.from(signature, 'base64url');
    mac[0] ^= 1;
    expect(subject.verify(`${prefix}.${body}.${mac.toString('base64url')}`)).toBeNull();
    expect(subject.verify(`${prefix}.${body}`)).toBeNull();
    expect(subject.verify(`${token}.extra`)).toBeNull();
  });

  it('accepts exactly one spelling of a token', () => {
    const subject = codec();
    const token = subject.sign(claims);
    const [prefix, body, signature] = token.split('.');
    const standard = Buffer.from(signature, 'base64url').toString('base64');
    // The last character carries 4 spare bits: flipping one leaves the decoded bytes alone.
    const last = signature.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = alphabet[alphabet.indexOf(last) ^ 1];
    const variants = [
      `${token}=`,
      `${prefix}.${body}.${standard}`,
      `${prefix}.${body}.${standard.replace(/=+$/, '')}`,
      `${prefix}.${body}.${signature.slice(0, -1)}${sameBytes}`,
      `${prefix}.${body}.${signature.slice(0, 10)}!${signature.slice(10)}`,
      `${token}${'!'.repeat(38)}`,
      `${prefix}.${body}=.${signature}`,
      `${prefix}.${body}!.${signature}`,
    ];
    // Each variant decodes to the signed bytes under Node's lenient decoder, so only the
    // spelling refuses it. A signature with no `-` or `_` (about one in four) has a standard
    // base64 form without padding that is the token itself: that one is no variant.
    for (const variant of variants.filter((spelling) => spelling !== token)) {
      const [, variantBody, variantSignature] = variant.split('.');
      expect(Buffer.from(variantSignature, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(
        true,
      );
      expect(Buffer.from(variantBody, 'base64url').equals(Buffer.from(body, 'base64url'))).toBe(true);
      expect(subject.verify(variant)).toBeNull();
    }
    expect(subject.verify(token)).toEqual(claims);
  });

  it.each(['', 'garbage', 'ct2.', 'ct2..', 'Bearer x', 'ct2.e30.AAAA'])(
    'rejects malformed token %p',
    (token) => {
      expect(codec().verify(token)).toBeNull();
    },
  );

  it('refuses a well-signed empty body, a third part, and a signature in another spelling', () => {
    const secret = randomBytes(32);
    const subject = codec(secret);
    const mac = (body: string) => createHmac('sha256', secret).update(`access-token:${body}`).digest();
    expect(subject.verify(`ct2..${mac('').toString('base64url')}`)).toBeNull();
    const token = subject.sign(claims);
    expect(subject.verify(`${token}.x`)).toBeNull();
    const [, body] = token.split('.');
    // The same 32 bytes in standard base64 with its padding: 44 characters, not the one spelling.
    expect(subject.verify(`ct2.${body}.${mac(body).toString('base64')}`)).toBeNull();
    expect(subject.verify(token)).toEqual(claims);
  });

  it('refuses a well-signed token of more than 512 characters, and under another prefix', () => {
    const subject = codec();
    const ofLength = (length: number) => {
      for (let size = 1; size < 400; size++) {
        for (const tokenId of ['t', 't1', 't12']) {
          const token = subject.sign({ ...claims, accountId: 'a'.repeat(size), tokenId });
          if (token.length === length) return token;
        }
      }
      throw new Error(`no token of ${length} characters`);
    };
    expect(subject.verify(ofLength(512))).not.toBeNull();
    // 513 cannot occur: unpadded base64 is never 1 more than a multiple of 4 long.
    expect(subject.verify(ofLength(514))).toBeNull();
    // ct1 tokens (before sessions and credentials versions) are refused, even signed under the secret.
    expect(subject.verify(subject.sign(claims).replace(/^ct2\./, 'ct1.'))).toBeNull();
    expect(subject.verify(subject.sign(claims).replace(/^ct2\./, 'ct3.'))).toBeNull();
  });

  it.each([
    ['an object', { accountId: 'a-1' }],
    ['the four claims of ct1', ['a-1', 't-1', 1, 2]],
    ['five claims', ['a-1', 't-1', 's-1', 1, 2]],
    ['seven claims', ['a-1', 't-1', 's-1', 0, 1, 2, 3]],
    ['a numeric account id', [1, 't-1', 's-1', 0, 1, 2]],
    ['a numeric token id', ['a-1', 1, 's-1', 0, 1, 2]],
    ['a numeric session id', ['a-1', 't-1', 1, 0, 1, 2]],
    ['a fractional credentials version', ['a-1', 't-1', 's-1', 0.5, 1, 2]],
    ['a string credentials version', ['a-1', 't-1', 's-1', '0', 1, 2]],
    ['a string issuedAt', ['a-1', 't-1', 's-1', 0, '1', 2]],
    ['a string expiresAt', ['a-1', 't-1', 's-1', 0, 1, '2']],
  ])('refuses well-signed claims of the wrong shape: %s', (_case, body) => {
    const subject = codec();
    const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
    const mac = (subject as unknown as { mac: (body: string) => Buffer }).mac(encoded);
    expect(subject.verify(`ct2.${encoded}.${mac.toString('base64url')}`)).toBeNull();
  });

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
