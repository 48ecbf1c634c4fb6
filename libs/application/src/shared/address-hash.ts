import { createHmac } from 'node:crypto';
import { normaliseEmail } from '@chronicle/domain';

/**
 * What a keyed hash of an address names. Each purpose has a key of its own, derived from the
 * server secret, so that a hash kept for one purpose is no use for another.
 */
export type AddressHashPurpose = 'security-email-hash' | 'attempt-limits';

/**
 * The one way the service names an e-mail address without spelling it out: HMAC-SHA-256 of the
 * normalised address under a key derived from the server secret. Never a plain hash, which anyone
 * holding a backup, the audit or the limits' store could test guessed addresses against offline.
 */
export function addressHasher(secret: Buffer, purpose: AddressHashPurpose): (email: string) => string {
  const key = createHmac('sha256', secret).update(`chronicle:${purpose}`).digest();
  return (email) => createHmac('sha256', key).update(normaliseEmail(email)).digest('hex');
}
