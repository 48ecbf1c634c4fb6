import { createHmac } from 'node:crypto';
import { normaliseEmail } from './values';

/**
 * What a keyed hash of an address names. Each purpose has a key of its own, derived from the
 * server secret, so that a hash kept for one purpose is no use for another. `address-streams`:
 * the names of an address's streams in the history (`email-<hash>`, `resetrequest-<hash>`);
 * `outbox-recipients`: the names of the outbox's files, grouped by recipient.
 */
export type AddressHashPurpose =
  'security-email-hash' | 'attempt-limits' | 'address-streams' | 'outbox-recipients';

/** A keyed hash of addresses, and the name of its key: the same for the same secret and purpose. */
export interface AddressHash {
  (email: string): string;
  /**
   * Names the key without revealing it (an HMAC of a fixed text under it): records which key a
   * set of hashes was made with, so that a change of the secret can be noticed.
   */
  readonly keyId: string;
}

/**
 * The one way the service names an e-mail address without spelling it out: HMAC-SHA-256 of the
 * normalised address under a key derived from the server secret. Never a plain hash, which anyone
 * holding a backup, the audit or the limits' store could test guessed addresses against offline.
 */
export function addressHasher(secret: Buffer, purpose: AddressHashPurpose): AddressHash {
  const key = createHmac('sha256', secret).update(`chronicle:${purpose}`).digest();
  const hash = (email: string) => createHmac('sha256', key).update(normaliseEmail(email)).digest('hex');
  // A text no normalised address can be (addresses hold an @), so never the hash of an address.
  const keyId = createHmac('sha256', key).update('chronicle key id').digest('hex').slice(0, 16);
  return Object.assign(hash, { keyId });
}
