import {
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { join } from 'node:path';
import { ChronicleConfig, ConfigError, keptSecret } from '@chronicle/config';
import { aesGcmOpen, aesGcmSeal, UnreadableCiphertextError } from './aes-gcm';

/** Where DATA_KEY_SECRET is kept when unset, on the embedded default. */
export const DATA_KEY_SECRET_FILE = 'data-key-secret';

/** The wrapped form's version (its first byte). */
const WRAP_VERSION = 1;

/**
 * The secret the data keys are wrapped under: DATA_KEY_SECRET, else, on the embedded default, one
 * kept in DATA_DIR/data-key-secret (0600, made at the first call). With MONGODB_URI it must be set:
 * the keys there are shared by every instance, and a secret kept in one instance's DATA_DIR would
 * differ between instances and be lost with it, and every personal value with it.
 */
export function dataKeySecretOf(
  config: Pick<ChronicleConfig, 'dataKeySecret' | 'dataDir' | 'mongodbUri'>,
): Buffer {
  if (config.dataKeySecret !== null) return config.dataKeySecret;
  if (config.mongodbUri !== null) {
    throw new ConfigError(
      'DATA_KEY_SECRET',
      'must be set (32 characters or more) when MONGODB_URI is: every instance must unwrap the data keys kept there',
    );
  }
  return keptSecret(
    join(config.dataDir, DATA_KEY_SECRET_FILE),
    'DATA_KEY_SECRET',
    'no personal value written under the old one can be read again',
  );
}

/**
 * Wraps and unwraps data keys under a key derived (HKDF-SHA-256) from DATA_KEY_SECRET, each bound
 * to its subject: a wrapped key copied to another subject's record does not unwrap. `check`, kept
 * by each store, tells a store whether it is opened under the secret its keys were made under.
 */
export class DataKeyWrapper {
  private readonly kek: KeyObject;
  /** HMAC of a constant under the wrapping key: names the secret without revealing it. */
  readonly check: string;

  constructor(secret: Uint8Array) {
    this.kek = createSecretKey(Buffer.from(hkdfSync('sha256', secret, '', 'chronicle data keys', 32)));
    this.check = createHmac('sha256', this.kek).update('chronicle data key check').digest('base64url');
  }

  /** A new data key: 256 bits from the CSPRNG. */
  static newKey(): Buffer {
    return randomBytes(32);
  }

  wrap(subject: string, key: Buffer): Buffer {
    return Buffer.concat([Buffer.of(WRAP_VERSION), aesGcmSeal(this.kek, key, wrapContext(subject))]);
  }

  unwrap(subject: string, wrapped: Buffer): Buffer {
    const what = `The data key of ${subject}`;
    if (wrapped[0] !== WRAP_VERSION) throw new UnreadableCiphertextError(what);
    return aesGcmOpen(this.kek, wrapped.subarray(1), wrapContext(subject), what);
  }

  /** Refuses a store whose keys were made under another secret, naming the store. */
  verify(storedCheck: string, store: string): void {
    const stored = Buffer.from(storedCheck);
    const ours = Buffer.from(this.check);
    if (stored.length === ours.length && timingSafeEqual(stored, ours)) return;
    throw new ConfigError(
      'DATA_KEY_SECRET',
      `is not the secret the data keys in ${store} were made under: set the one they were made under ` +
        '(under another, no personal value written before can be read)',
    );
  }
}

function wrapContext(subject: string): Buffer {
  return Buffer.from(JSON.stringify(['chronicle data key', WRAP_VERSION, subject]), 'utf8');
}
