import { createHash, randomBytes } from 'node:crypto';

const UUID_BYTES = 16;
/** 256 bits from the CSPRNG, after the account id. */
const SECRET_BYTES = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{64}$/;

export interface IssuedResetToken {
  /** Goes into the e-mail only: never stored, never logged. */
  token: string;
  tokenId: string;
  tokenHash: string;
}

export const hashResetToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** A token names its account (so completion loads one stream) and carries 256 random bits. */
export function newResetToken(accountId: string): IssuedResetToken {
  const raw = Buffer.concat([Buffer.from(accountId.replace(/-/g, ''), 'hex'), randomBytes(SECRET_BYTES)]);
  const token = raw.toString('base64url');
  return { token, tokenId: randomBytes(9).toString('base64url'), tokenHash: hashResetToken(token) };
}

/** The account a token names and the token's hash; null for anything not shaped like our tokens. */
export function parseResetToken(token: unknown): { accountId: string; tokenHash: string } | null {
  if (typeof token !== 'string' || !TOKEN_SHAPE.test(token)) return null;
  const hex = Buffer.from(token, 'base64url').subarray(0, UUID_BYTES).toString('hex');
  const accountId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { accountId, tokenHash: hashResetToken(token) };
}
