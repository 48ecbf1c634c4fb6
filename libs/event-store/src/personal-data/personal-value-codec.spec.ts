import { UnreadableCiphertextError } from './aes-gcm';
import { DataSubject } from './data-key-store.port';
import { decryptPersonalValue, encryptPersonalValue } from './personal-value-codec';

const key = Buffer.alloc(32, 0x42);
const user: DataSubject = { kind: 'user', id: '0b5e' };
const customer: DataSubject = { kind: 'customer', id: '7' };
const iv = Buffer.from('000102030405060708090a0b', 'hex');

// Pinned: values stored in events must decrypt under every later build. Each was computed with
// Node's AES-256-GCM directly: key 32 × 0x42, the IV above, associated data
// JSON ["chronicle personal value", 1, subject, field], plaintext the value's JSON.
const knownAnswers: Array<[DataSubject, string, string | number | null, string]> = [
  [user, 'name', 'Zoë Ødegård', 'p1.AAECAwQFBgcICQoLJ4T-HhoMMZP5YyPQdK8_GYW4A63_ej--nEI2tpnE2hQ'],
  [user, 'age', 42, 'p1.AAECAwQFBgcICQoLMewty72SZmCN0dziBjytjBjv'],
  [customer, 'email', 'a@b.example', 'p1.AAECAwQFBgcICQoLJ7_Rv59Jimrwdih284xj0fOShLSwHS-1e3TcNR4'],
  [user, 'age', null, 'p1.AAECAwQFBgcICQoLa6v9sSmkSRGIbqK28rgnAloGmyM'],
];

describe('personal value codec', () => {
  it.each(knownAnswers)(
    'encrypts and decrypts the known answer for %j %s',
    (subject, field, value, encoded) => {
      expect(encryptPersonalValue(key, subject, field, value, iv)).toBe(encoded);
      expect(decryptPersonalValue(key, subject, field, encoded)).toEqual(value);
    },
  );

  it('round-trips values with a new IV each time, keeping their JSON type', () => {
    for (const value of ['Ada', '', '名前 👩‍💻', 'x'.repeat(5000), 0, 130, -1.5, null]) {
      const first = encryptPersonalValue(key, user, 'name', value);
      const second = encryptPersonalValue(key, user, 'name', value);
      expect(first).not.toBe(second);
      expect(first).toMatch(/^p1\.[A-Za-z0-9_-]+$/);
      expect(decryptPersonalValue(key, user, 'name', first)).toStrictEqual(value);
      expect(decryptPersonalValue(key, user, 'name', second)).toStrictEqual(value);
    }
  });

  it('shows nothing of the value in what it stores', () => {
    const encoded = encryptPersonalValue(key, user, 'email', 'ada.lovelace@example.com');
    const stored = Buffer.from(encoded.slice(3), 'base64url');
    for (const needle of [
      'ada.lovelace',
      'lovelace@example',
      Buffer.from('ada.lovelace').toString('base64'),
    ]) {
      expect(encoded).not.toContain(needle);
      expect(stored.includes(needle)).toBe(false);
    }
  });

  it('refuses a value altered anywhere, moved to another subject or field, or under another key', () => {
    const [, , , encoded] = knownAnswers[0];
    const bytes = Buffer.from(encoded.slice(3), 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const altered = Buffer.from(bytes);
      altered[i] ^= 0x20;
      expect(() => decryptPersonalValue(key, user, 'name', `p1.${altered.toString('base64url')}`)).toThrow(
        UnreadableCiphertextError,
      );
    }
    const fresh = encryptPersonalValue(key, user, 'name', 'Ada');
    expect(decryptPersonalValue(key, user, 'name', fresh)).toBe('Ada');
    expect(() => decryptPersonalValue(key, { kind: 'user', id: '0b5f' }, 'name', fresh)).toThrow(
      'name of user-0b5f cannot be decrypted',
    );
    expect(() => decryptPersonalValue(key, { kind: 'customer', id: '0b5e' }, 'name', fresh)).toThrow(
      UnreadableCiphertextError,
    );
    expect(() => decryptPersonalValue(key, user, 'email', fresh)).toThrow(UnreadableCiphertextError);
    const otherKey = Buffer.alloc(32, 0x43);
    expect(() => decryptPersonalValue(otherKey, user, 'name', fresh)).toThrow(UnreadableCiphertextError);
    expect(() => decryptPersonalValue(key, user, 'name', encoded.slice(0, 30))).toThrow(
      UnreadableCiphertextError,
    );
  });

  it('refuses what is not its encoding', () => {
    for (const text of ['Ada', 'p2.AAECAwQFBgcICQoL', 'p1.', 'p1.AAE+CAw', 'p1.AAECAwQFBgcICQoL==']) {
      expect(() => decryptPersonalValue(key, user, 'name', text)).toThrow(UnreadableCiphertextError);
    }
  });

  it('refuses a number JSON cannot hold', () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => encryptPersonalValue(key, user, 'age', value)).toThrow('age is not a finite number');
    }
  });
});
