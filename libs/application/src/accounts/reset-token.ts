import { createHash, createHmac } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_BYTES = 16;
export const RESET_TOKEN_PATTERN = /^[A-Za-z0-9_-]{64}$/;

export interface IssuedResetToken {
  /** Goes into the e-mail only: never stored, never logged. */
  token: string;
  tokenHash: string;
}

export const hashResetToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * The token of reset request `requestId`: the request id (so completion loads one small stream),
 * then 256 bits of HMAC-SHA-256 of it under the server secret. The same request always gives the
 * same token, so a retry after a crash re-sends it rather than issuing a second one, and no one
 * without the secret can compute it.
 */
export function resetTokenFor(requestId: string, secret: Buffer): IssuedResetToken {
  if (!UUID.test(requestId))
    throw new Error(`A reset request id is a UUID, not ${JSON.stringify(requestId)}`);
  const mac = createHmac('sha256', secret).update(`reset-token:${requestId.toLowerCase()}`).digest();
  const token = Buffer.concat([Buffer.from(requestId.replace(/-/g, ''), 'hex'), mac]).toString('base64url');
  return { token, tokenHash: hashResetToken(token) };
}

/** The request a token names and the token's hash; null for anything not shaped like our tokens. */
export function parseResetToken(token: unknown): { requestId: string; tokenHash: string } | null {
  if (typeof token !== 'string' || !RESET_TOKEN_PATTERN.test(token)) return null;
  const hex = Buffer.from(token, 'base64url').subarray(0, UUID_BYTES).toString('hex');
  const requestId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { requestId, tokenHash: hashResetToken(token) };
}
