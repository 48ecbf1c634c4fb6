import * as argon2 from 'argon2';
import { ARGON2_OPTIONS, Argon2PasswordHasher } from './argon2-password-hasher';

/** The hash of a real account, with the cost every stored hash has (ARGON2_OPTIONS). */
const ARGON2ID_HASH = /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/;

describe('Argon2PasswordHasher', () => {
  const hasher = new Argon2PasswordHasher();

  it('hashes with Argon2id at the OWASP cost, and verifies only the right password', async () => {
    const hash = await hasher.hash('correct horse battery');
    expect(hash).toMatch(ARGON2ID_HASH);
    expect(await hasher.verify(hash, 'correct horse battery')).toBe(true);
    expect(await hasher.verify(hash, 'correct horse batterY')).toBe(false);
  });

  // "café" with a precomposed é (NFC) and with e + combining acute (NFD), and a no-break space.
  const NFC = 'caf\u00e9 au lait';
  const NFD = 'cafe\u0301 au lait';
  const SPACED = 'caf\u00e9\u00a0au lait';

  it('prepares passwords (RFC 8265 OpaqueString): each spelling of one password verifies', async () => {
    const hash = await hasher.hash(NFD);
    for (const spelling of [NFC, NFD, SPACED]) expect(await hasher.verify(hash, spelling)).toBe(true);
    expect(await argon2.verify(hash, NFC)).toBe(true);
  });

  it('still verifies a hash of a password as sent before preparing, and asks for it to be replaced', async () => {
    const legacy = await argon2.hash(NFD, ARGON2_OPTIONS);
    expect(await hasher.verify(legacy, NFD)).toBe('rehash');
    expect(await hasher.verify(legacy, NFC)).toBe(false);
    expect(await hasher.verify(legacy, 'cafe\u0301 au laiT')).toBe(false);
  });

  it('answers false, not an error, for a stored hash it cannot read', async () => {
    expect(await hasher.verify('not-a-hash', 'whatever')).toBe(false);
  });

  it('computes the dummy hash once, up front, so the first unknown address costs no more than later ones', async () => {
    const dummy = new Argon2PasswordHasher();
    const hash = jest.spyOn(dummy, 'hash');
    dummy.onModuleInit();
    expect(hash).toHaveBeenCalledTimes(1);

    await dummy.verifyDummy('a guess');
    await dummy.verifyDummy('another guess');

    expect(hash).toHaveBeenCalledTimes(1);
  });

  it('still works when used before module init', async () => {
    const dummy = new Argon2PasswordHasher();
    const verify = jest.spyOn(dummy, 'verify');
    await dummy.verifyDummy('a guess');
    expect(verify).toHaveBeenCalledWith(expect.stringMatching(ARGON2ID_HASH), 'a guess');
  });

  it('spends a full verify against a hash of the same cost on an unknown account (the timing defence)', async () => {
    const dummy = new Argon2PasswordHasher();
    dummy.onModuleInit();
    const verify = jest.spyOn(dummy, 'verify');

    await dummy.verifyDummy('some guess');
    await dummy.verifyDummy('another guess');

    expect(verify.mock.calls).toEqual([
      [expect.stringMatching(ARGON2ID_HASH), 'some guess'],
      [expect.stringMatching(ARGON2ID_HASH), 'another guess'],
    ]);
    // Both ran to completion (a dummy never matches) against the one hash made at start-up.
    expect(await Promise.all(verify.mock.results.map((result) => result.value))).toEqual([false, false]);
    expect(verify.mock.calls[0][0]).toBe(verify.mock.calls[1][0]);
  });
});
