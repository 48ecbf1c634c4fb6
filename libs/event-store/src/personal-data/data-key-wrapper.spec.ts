import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@chronicle/config';
import { SqliteDataKeyStore } from '../embedded/sqlite-data-key-store';
import { UnreadableCiphertextError } from './aes-gcm';
import { DATA_KEY_SECRET_FILE, dataKeySecretOf, DataKeyWrapper } from './data-key-wrapper';
import { MongoDataKeyStore } from './mongo-data-key-store';
import { openDataKeyStore } from './open-data-key-store';

const secret = Buffer.from('s'.repeat(32));

describe('DataKeyWrapper', () => {
  it('wraps a key so that only its own subject, under the same secret, unwraps it', () => {
    const wrapper = new DataKeyWrapper(secret);
    const key = DataKeyWrapper.newKey();
    const wrapped = wrapper.wrap('user-1', key);
    expect(wrapped[0]).toBe(1);
    expect(wrapped.includes(key)).toBe(false);
    expect(new DataKeyWrapper(Buffer.from(secret)).unwrap('user-1', wrapped).equals(key)).toBe(true);
    expect(() => wrapper.unwrap('user-2', wrapped)).toThrow('The data key of user-2 cannot be decrypted');
    expect(() => new DataKeyWrapper(Buffer.from('t'.repeat(32))).unwrap('user-1', wrapped)).toThrow(
      UnreadableCiphertextError,
    );
    const otherVersion = Buffer.from(wrapped);
    otherVersion[0] = 2;
    expect(() => wrapper.unwrap('user-1', otherVersion)).toThrow(UnreadableCiphertextError);
  });

  it('makes a new random 256-bit key each time', () => {
    const keys = Array.from({ length: 20 }, () => DataKeyWrapper.newKey().toString('hex'));
    expect(new Set(keys).size).toBe(20);
    expect(keys.every((key) => key.length === 64)).toBe(true);
  });

  it("checks a store's record of its secret, naming DATA_KEY_SECRET and the store", () => {
    const wrapper = new DataKeyWrapper(secret);
    const other = new DataKeyWrapper(Buffer.from('t'.repeat(32)));
    expect(other.check).not.toBe(wrapper.check);
    expect(new DataKeyWrapper(Buffer.from(secret)).check).toBe(wrapper.check);
    expect(() => wrapper.verify(wrapper.check, 'the store')).not.toThrow();
    for (const stored of [other.check, '', wrapper.check.slice(1)]) {
      expect(() => wrapper.verify(stored, 'the store')).toThrow(ConfigError);
      expect(() => wrapper.verify(stored, 'the store')).toThrow(
        'DATA_KEY_SECRET is not the secret the data keys in the store were made under',
      );
    }
  });
});

describe('dataKeySecretOf and openDataKeyStore', () => {
  const dataDir = () => mkdtempSync(join(tmpdir(), 'data-key-secret-'));

  it('takes DATA_KEY_SECRET when set, and keeps nothing', async () => {
    const dir = dataDir();
    const config = { dataKeySecret: secret, dataDir: dir, mongodbUri: null };
    expect(dataKeySecretOf(config)).toBe(secret);
    const store = await openDataKeyStore(config);
    expect(store).toBeInstanceOf(SqliteDataKeyStore);
    await store.close();
    expect(() => statSync(join(dir, DATA_KEY_SECRET_FILE))).toThrow('ENOENT');
  });

  it('keeps a generated secret in DATA_DIR, private, on the embedded default, and reuses it', () => {
    const dir = dataDir();
    const config = { dataKeySecret: null, dataDir: dir, mongodbUri: null };
    const first = dataKeySecretOf(config);
    expect(first).toHaveLength(32);
    expect(dataKeySecretOf(config).equals(first)).toBe(true);
    const file = join(dir, DATA_KEY_SECRET_FILE);
    expect(readFileSync(file, 'utf8')).toBe(first.toString('hex'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a kept secret that is not one, naming the file', () => {
    const dir = dataDir();
    writeFileSync(join(dir, DATA_KEY_SECRET_FILE), 'abc');
    const read = () => dataKeySecretOf({ dataKeySecret: null, dataDir: dir, mongodbUri: null });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(join(dir, DATA_KEY_SECRET_FILE));
  });

  it('requires DATA_KEY_SECRET with MONGODB_URI, and opens the MongoDB store with it', async () => {
    const dir = dataDir();
    const config = { dataKeySecret: null, dataDir: dir, mongodbUri: 'mongodb://127.0.0.1:1/keys' };
    await expect(openDataKeyStore(config)).rejects.toThrow(ConfigError);
    expect(() => dataKeySecretOf(config)).toThrow('DATA_KEY_SECRET must be set');
    expect(() => statSync(join(dir, DATA_KEY_SECRET_FILE))).toThrow('ENOENT');
    // The driver connects at the first call, so nothing is reached here.
    const store = await openDataKeyStore({ ...config, dataKeySecret: secret });
    expect(store).toBeInstanceOf(MongoDataKeyStore);
    await store.close();
  });
});
