import { createHmac, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AccessTokenClaims, AccessTokenCodec } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';

/** ct2: claims carry the session and credentials version (ct1 tokens, from before, no longer verify). */
const PREFIX = 'ct2.';
/** A SHA-256 HMAC in base64url: 43 characters, no padding. */
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether `text` is the one base64url spelling of what it decodes to. Node's decoding skips
 * padding, `+`, `/` and stray characters, and ignores a last character's spare bits: any of them
 * makes the re-encoding differ.
 */
function canonicalBase64Url(text: string): boolean {
  return Buffer.from(text, 'base64url').toString('base64url') === text;
}
/** Bounds the memo of verified tokens: the oldest entry goes first. */
export const VERIFIED_TOKENS_MAX_ENTRIES = 10_000;

/**
 * Tokens are `ct1.<claims>.<HMAC-SHA256>`: checked without any store, so no token is kept at rest;
 * revocation is the sessions' job. Clients must treat them as opaque.
 */
@Injectable()
export class HmacAccessTokenCodec extends AccessTokenCodec {
  /**
   * Tokens already verified, with their claims: a client sends its token on every request, and
   * the HMAC is most of what checking it costs. In memory only; only tokens that verified get in.
   */
  private readonly verified = new Map<string, AccessTokenClaims>();

  constructor(private readonly config: ChronicleConfig) {
    super();
  }

  sign(claims: AccessTokenClaims): string {
    const body = Buffer.from(
      JSON.stringify([
        claims.accountId,
        claims.tokenId,
        claims.sessionId,
        claims.credentialsVersion,
        claims.issuedAt,
        claims.expiresAt,
      ]),
    ).toString('base64url');
    return `${PREFIX}${body}.${this.mac(body).toString('base64url')}`;
  }

  verify(token: string): AccessTokenClaims | null {
    const known = this.verified.get(token);
    if (known !== undefined) return { ...known };
    const claims = this.check(token);
    if (claims !== null) {
      if (this.verified.size >= VERIFIED_TOKENS_MAX_ENTRIES) {
        const oldest = this.verified.keys().next();
        if (!oldest.done) this.verified.delete(oldest.value);
      }
      this.verified.set(token, claims);
    }
    return claims === null ? null : { ...claims };
  }

  private check(token: string): AccessTokenClaims | null {
    if (!token.startsWith(PREFIX) || token.length > 512) return null;
    const [body, signature, extra] = token.slice(PREFIX.length).split('.');
    // Exactly two parts, each in its one accepted spelling (an empty body parses to no claims).
    if (signature === undefined || extra !== undefined) return null;
    if (!SIGNATURE.test(signature) || !canonicalBase64Url(signature) || !canonicalBase64Url(body))
      return null;
    if (!timingSafeEqual(Buffer.from(signature, 'base64url'), this.mac(body))) return null;
    try {
      const claims: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      if (!Array.isArray(claims) || claims.length !== 6) return null;
      const [accountId, tokenId, sessionId, credentialsVersion, issuedAt, expiresAt] = claims as unknown[];
      if (typeof accountId !== 'string' || typeof tokenId !== 'string' || typeof sessionId !== 'string')
        return null;
      if (!Number.isSafeInteger(credentialsVersion)) return null;
      if (typeof issuedAt !== 'number' || typeof expiresAt !== 'number') return null;
      return {
        accountId,
        tokenId,
        sessionId,
        credentialsVersion: credentialsVersion as number,
        issuedAt,
        expiresAt,
      };
    } catch {
      return null;
    }
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.config.tokenSecret).update(`access-token:${body}`).digest();
  }
}
