/**
 * A password check's answer: `'rehash'` is a match with a hash of the password as sent before
 * passwords were prepared (RFC 8265), which should be replaced by a hash of it as prepared.
 */
export type PasswordMatch = boolean | 'rehash';

/** Password hashing (adapter: Argon2id in the auth lib); passwords are prepared (RFC 8265) inside. */
export abstract class PasswordHasher {
  abstract hash(password: string): Promise<string>;
  abstract verify(hash: string, password: string): Promise<PasswordMatch>;
  /** Spends the time of a verify without a real hash, so unknown accounts answer as slowly as known ones. */
  abstract verifyDummy(password: string): Promise<void>;
}

export interface AccessTokenClaims {
  accountId: string;
  tokenId: string;
  sessionId: string;
  /** The credentials version the issuing request was authenticated against: revocation compares it. */
  credentialsVersion: number;
  /** Milliseconds since the Unix epoch, by the issuing host's clock (expiry only, never revocation). */
  issuedAt: number;
  expiresAt: number;
}

/** Signs and verifies access tokens (adapter: HMAC under TOKEN_SECRET in the auth lib). */
export abstract class AccessTokenCodec {
  abstract sign(claims: AccessTokenClaims): string;
  /** The claims of a well-signed token, else null; expiry is the caller's to check. */
  abstract verify(token: string): AccessTokenClaims | null;
}
