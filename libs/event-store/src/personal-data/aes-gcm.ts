import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that does not open: altered, cut short, or sealed under another key or context. */
export class UnreadableCiphertextError extends Error {
  constructor(what: string) {
    super(`${what} cannot be decrypted: it was altered, or sealed under another key or for another place`);
    this.name = 'UnreadableCiphertextError';
  }
}

/**
 * AES-256-GCM (Node's crypto) of `plaintext` under `key`, bound to `aad`: the random 96-bit IV,
 * the ciphertext, then the 128-bit tag. `iv` is given only by known-answer tests.
 */
export function aesGcmSeal(
  key: Buffer,
  plaintext: Buffer,
  aad: Buffer,
  iv: Buffer = randomBytes(IV_BYTES),
): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/** The plaintext of what aesGcmSeal made under `key` and `aad`, else an UnreadableCiphertextError naming `what`. */
export function aesGcmOpen(key: Buffer, sealed: Buffer, aad: Buffer, what: string): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new UnreadableCiphertextError(what);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES), {
    authTagLength: TAG_BYTES,
  });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw new UnreadableCiphertextError(what);
  }
}
