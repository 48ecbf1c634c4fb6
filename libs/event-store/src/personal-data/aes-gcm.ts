import { type CipherKey, createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The sizes of aesGcmSeal's IV and tag. */
export const AES_GCM_IV_BYTES = 12;
export const AES_GCM_TAG_BYTES = 16;

/** A sealed value that does not open: altered, cut short, or sealed under another key or context. */
export class UnreadableCiphertextError extends Error {
  constructor(what: string) {
    super(`${what} cannot be decrypted: it was altered, or sealed under another key or for another place`);
    this.name = 'UnreadableCiphertextError';
  }
}

/**
 * AES-256-GCM (Node's crypto) of `plaintext` under `key`, bound to `aad`: the random 96-bit IV,
 * the ciphertext, then the 128-bit tag. `iv` is given only by known-answer tests. A key used for
 * every request may be a KeyObject: a raw key is checked and imported again by every cipher.
 */
export function aesGcmSeal(key: CipherKey, plaintext: Buffer, aad: Buffer, iv: Buffer = randomIv()): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: AES_GCM_TAG_BYTES });
  cipher.setAAD(aad);
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/** IVs drawn per pool: one call into the CSPRNG per 341 seals, instead of one per seal. */
const IV_POOL_BYTES = 341 * AES_GCM_IV_BYTES;
let ivPool = Buffer.alloc(0);
let ivTaken = 0;

/**
 * A fresh random IV. Each pool is a new buffer, never refilled in place, so an IV already handed
 * out never changes and none is handed out twice. IVs are public (stored beside the ciphertext):
 * holding the next ones in memory reveals nothing. The profile of PATCH had randomBytes as the
 * fourth costliest function on its own; a pool makes it the cost of a slice.
 */
function randomIv(): Buffer {
  if (ivTaken + AES_GCM_IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_POOL_BYTES);
    ivTaken = 0;
  }
  return ivPool.subarray(ivTaken, (ivTaken += AES_GCM_IV_BYTES));
}

/** The plaintext of what aesGcmSeal made under `key` and `aad`, else an UnreadableCiphertextError naming `what`. */
export function aesGcmOpen(key: CipherKey, sealed: Buffer, aad: Buffer, what: string): Buffer {
  if (sealed.length < AES_GCM_IV_BYTES + AES_GCM_TAG_BYTES) throw new UnreadableCiphertextError(what);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, AES_GCM_IV_BYTES), {
    authTagLength: AES_GCM_TAG_BYTES,
  });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - AES_GCM_TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(AES_GCM_IV_BYTES, sealed.length - AES_GCM_TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw new UnreadableCiphertextError(what);
  }
}
