import { Injectable } from '@nestjs/common';
import { AccessTokenCodec, AccountDirectory, PasswordHasher, Principal } from '@chronicle/application';
import { AccountSessions } from './account-sessions';
import { RequestLike, singleCredential } from './credentials';
import { VerifiedCredentials } from './verified-credentials';

/**
 * Who a credential belongs to. The passport strategies are adapters over this; the hot paths ask
 * it directly (see presentedCredential), so both decide alike.
 */
@Injectable()
export class CredentialVerifier {
  /**
   * Basic checks under way, by credentials key: a client sending the same credentials on many
   * requests at once (its first burst, or when the cache entry lapses) pays for one Argon2id
   * hash, not one per request, and neither does anyone replaying one guess in parallel.
   */
  private readonly basicChecks = new Map<string, Promise<Principal | null>>();

  constructor(
    private readonly codec: AccessTokenCodec,
    private readonly sessions: AccountSessions,
    private readonly directory: AccountDirectory,
    private readonly hasher: PasswordHasher,
    private readonly verified: VerifiedCredentials,
  ) {}

  /** A signed, unexpired, unrevoked access token's principal. */
  async bearer(token: string): Promise<Principal | null> {
    const claims = this.codec.verify(token);
    return claims ? this.sessions.principalFor(claims) : null;
  }

  /** Basic credentials' principal: from the cache of recent successes, else by Argon2id. */
  async basic(email: string, password: string): Promise<Principal | null> {
    const { key, generation } = this.verified.keyFor(email, password);
    const cached = this.verified.lookup(key);
    if (cached) return cached;
    const running = this.basicChecks.get(key);
    if (running) return running;
    const check = this.checkBasic(email, password, key, generation);
    this.basicChecks.set(key, check);
    try {
      return await check;
    } finally {
      this.basicChecks.delete(key);
    }
  }

  private async checkBasic(
    email: string,
    password: string,
    key: string,
    generation: number,
  ): Promise<Principal | null> {
    const account = await this.directory.findByEmail(email);
    if (!account) {
      // As slow as a wrong password, so that the answer does not tell which addresses exist.
      await this.hasher.verifyDummy(password);
      return null;
    }
    if (!(await this.hasher.verify(account.passwordHash, password))) return null;
    const principal: Principal = {
      accountId: account.id,
      userId: account.userId,
      roles: account.roles,
      method: 'basic',
    };
    this.verified.remember(key, generation, principal);
    return principal;
  }

  /**
   * For hot paths: the principal of a request with one well-formed credential that needs no
   * Argon2id work (a token, or Basic credentials verified moments ago). Null decides nothing:
   * the request then goes through the guard, which authenticates it or explains the refusal.
   */
  async withoutHashing(request: RequestLike): Promise<Principal | null> {
    const credential = singleCredential(request);
    if (credential === null) return null;
    if (credential.scheme === 'bearer') return this.bearer(credential.token);
    return this.verified.lookup(this.verified.keyFor(credential.email, credential.password).key);
  }
}
