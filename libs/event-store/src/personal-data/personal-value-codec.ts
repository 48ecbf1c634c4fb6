import type { CipherKey } from 'node:crypto';
import { aesGcmOpen, aesGcmSeal, UnreadableCiphertextError } from './aes-gcm';
import { DataSubject, subjectName } from './data-key-store.port';

/** A personal value as events hold it: a name, an e-mail address, an age (null: none). */
export type PersonalValue = string | number | null;

/** Version 1 of the stored form: `p1.` then base64url of IV (12 bytes), ciphertext and tag (16). */
const PREFIX = 'p1.';
const ENCODED = /^p1\.[A-Za-z0-9_-]+$/;

/** Whether a stored value has the encrypted form (whether or not it then decrypts). */
export function isEncryptedValue(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

/**
 * A personal value encrypted (AES-256-GCM) under its subject's key, bound to the subject and the
 * field it is stored in: moved to another subject or field, it no longer decrypts. The value's
 * JSON is encrypted, so a number comes back a number. `iv` is given only by known-answer tests.
 */
export function encryptPersonalValue(
  key: CipherKey,
  subject: DataSubject,
  field: string,
  value: PersonalValue,
  iv?: Buffer,
): string {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new TypeError(`${field} is not a finite number`);
  }
  const plaintext = Buffer.from(JSON.stringify(value), 'utf8');
  return PREFIX + aesGcmSeal(key, plaintext, context(subject, field), iv).toString('base64url');
}

/**
 * The value encryptPersonalValue stored under `key`. An altered value, or one moved from another
 * subject or field, is an UnreadableCiphertextError. (An erased subject has no key: its store
 * reads its values as null without decrypting anything.)
 */
export function decryptPersonalValue(
  key: CipherKey,
  subject: DataSubject,
  field: string,
  encoded: string,
): PersonalValue {
  const what = `${field} of ${subjectName(subject)}`;
  if (!ENCODED.test(encoded)) throw new UnreadableCiphertextError(what);
  const sealed = Buffer.from(encoded.slice(PREFIX.length), 'base64url');
  const plaintext = aesGcmOpen(key, sealed, context(subject, field), what);
  return JSON.parse(plaintext.toString('utf8')) as PersonalValue;
}

/** The associated data: the format's version, the subject and the field, unambiguously joined. */
function context(subject: DataSubject, field: string): Buffer {
  return Buffer.from(JSON.stringify(['chronicle personal value', 1, subjectName(subject), field]), 'utf8');
}
