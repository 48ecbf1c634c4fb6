import { Principal } from '@chronicle/application';
import { FixedClock } from '@chronicle/application/testing';
import { ChronicleConfig } from '@chronicle/config';
import {
  VERIFIED_CREDENTIALS_MAX_ENTRIES,
  VERIFIED_CREDENTIALS_TTL_MS,
  VerifiedCredentials,
} from './verified-credentials';

const principal = (accountId: string): Principal => ({
  accountId,
  userId: `user-of-${accountId}`,
  roles: [],
  method: 'basic',
  credentialsVersion: 0,
});

describe('VerifiedCredentials', () => {
  let clock: FixedClock;
  let cache: VerifiedCredentials;
  const secret = (text: string) => ({ tokenSecret: Buffer.from(text.repeat(32)) }) as ChronicleConfig;

  beforeEach(() => {
    clock = new FixedClock(Date.parse('2026-11-22T09:00:00.000Z'));
    cache = new VerifiedCredentials(secret('s'), clock);
  });

  it('keys by a keyed hash that holds neither the password nor a plain hash of it', () => {
    const { key } = cache.keyFor('ada@example.com', 'correct horse battery');
    expect(key).not.toContain('correct');
    expect(
      new VerifiedCredentials(secret('t'), clock).keyFor('ada@example.com', 'correct horse battery').key,
    ).not.toBe(key);
    expect(cache.keyFor('ada@example.com', 'correct horse batterY').key).not.toBe(key);
    // The separator keeps "a:bc" and "ab:c" apart.
    expect(cache.keyFor('ab', 'c').key).not.toBe(cache.keyFor('a', 'bc').key);
  });

  it('answers a remembered principal until it expires', () => {
    const { key, generation } = cache.keyFor('ada@example.com', 'pw');
    expect(cache.lookup(key)).toBeNull();
    cache.remember(key, generation, principal('a1'));
    expect(cache.lookup(key)).toEqual(principal('a1'));
    clock.time += VERIFIED_CREDENTIALS_TTL_MS;
    expect(cache.lookup(key)).toBeNull();
  });

  it("forgets an account's entries, and only that account's", () => {
    const ada = cache.keyFor('ada@example.com', 'pw');
    const bob = cache.keyFor('bob@example.com', 'pw');
    cache.remember(ada.key, ada.generation, principal('a1'));
    cache.remember(bob.key, bob.generation, principal('b1'));
    cache.forgetAccount('a1');
    expect(cache.lookup(ada.key)).toBeNull();
    expect(cache.lookup(bob.key)).toEqual(principal('b1'));
  });

  it('does not remember a check that began before a forget', () => {
    const { key, generation } = cache.keyFor('ada@example.com', 'old password');
    cache.forgetAccount('a1');
    cache.remember(key, generation, principal('a1'));
    expect(cache.lookup(key)).toBeNull();
  });

  it('drops the oldest entry when full', () => {
    const keys = Array.from({ length: VERIFIED_CREDENTIALS_MAX_ENTRIES + 1 }, (_, i) =>
      cache.keyFor(`u${i}`, 'pw'),
    );
    for (const { key, generation } of keys) cache.remember(key, generation, principal('a1'));
    expect(cache.lookup(keys[0].key)).toBeNull();
    expect(cache.lookup(keys[1].key)).toEqual(principal('a1'));
    expect(cache.lookup(keys[keys.length - 1].key)).toEqual(principal('a1'));
  });
});
