import { hash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock, Principal } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { normaliseEmail, preparePassword } from '@chronicle/domain';

/** How long a verified e-mail and password stand in for an Argon2id check. */
export const VERIFIED_CREDENTIALS_TTL_MS = 60_000;
/** Bounds the memory: the oldest entry goes first. */
export const VERIFIED_CREDENTIALS_MAX_ENTRIES = 10_000;

interface Entry {
  principal: Principal;
  expiresAt: number;
}

/**
 * Basic credentials that passed Argon2id moments ago, so that a client sending them on every
 * request pays for one hash, not one per request. Keyed by a hash of the credentials under the
 * server secret, so no password (nor anything that could be tested offline without the secret)
 * is held. Only successes are kept: a wrong password always costs a full hash. An account's
 * entries go on any password change, reset or token revocation.
 */
@Injectable()
export class VerifiedCredentials {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every forget: a check that began before one must not be remembered after it. */
  private generation = 0;

  private readonly keyPrefix: string;

  constructor(
    config: ChronicleConfig,
    private readonly clock: Clock,
  ) {
    this.keyPrefix = `basic-credentials:${config.tokenSecret.toString('base64')}:`;
  }

  /** The key for these credentials, and the generation to hand back to remember(). */
  keyFor(email: string, password: string): { key: string; generation: number } {
    // One one-shot SHA-256 over a secret prefix: a keyed hash at a quarter of createHmac's cost.
    // The key is only ever an index into this map, never shown, so length extension is moot.
    // Both as normalised: every spelling of one address, and of one password, is one credential.
    const key = hash(
      'sha256',
      `${this.keyPrefix}${normaliseEmail(email)}\0${preparePassword(password)}`,
      'base64url',
    );
    return { key, generation: this.generation };
  }

  lookup(key: string): Principal | null {
    const entry = this.entries.get(key);
    if (entry === undefined) return null;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.entries.delete(key);
      return null;
    }
    return entry.principal;
  }

  /** Keeps a verified principal, unless something was forgotten since the check began. */
  remember(key: string, generation: number, principal: Principal): void {
    if (generation !== this.generation) return;
    this.entries.delete(key);
    if (this.entries.size >= VERIFIED_CREDENTIALS_MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { principal, expiresAt: this.clock.now().getTime() + VERIFIED_CREDENTIALS_TTL_MS });
  }

  /** Drops every entry of the account (its password or tokens changed). */
  forgetAccount(accountId: string): void {
    this.generation++;
    for (const [key, entry] of this.entries) {
      if (entry.principal.accountId === accountId) this.entries.delete(key);
    }
  }
}
