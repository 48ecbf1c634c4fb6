import { Injectable } from '@nestjs/common';
import {
  AccessTokenCodec,
  AccountDirectory,
  AttemptLimits,
  PasswordHasher,
  Principal,
} from '@chronicle/application';
import { AccountSessions } from './account-sessions';
import { TokenRejection } from './token-rejection';
import { VerifiedCredentials } from './verified-credentials';

/** Who a credential belongs to; the passport strategies are adapters over this. */
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
    private readonly limits: AttemptLimits,
  ) {}

  /** A signed, unexpired, unrevoked access token's principal, or why it is refused. */
  async bearer(token: string): Promise<Principal | TokenRejection> {
    const claims = this.codec.verify(token);
    // Malformed or wrongly signed: none of its claims (its id neither) can be trusted.
    return claims ? this.sessions.principalFor(claims) : new TokenRejection('invalid', null);
  }

  /**
   * Basic credentials' principal: from the cache of recent successes, else by Argon2id under the
   * failed-login limits of the client (`client`: its address) and of the address.
   */
  async basic(email: string, password: string, client: string): Promise<Principal | null> {
    const { key, generation } = this.verified.keyFor(email, password);
    const cached = this.verified.lookup(key);
    if (cached) return cached;
    const running = this.basicChecks.get(key);
    if (running) return running;
    const check = this.limits.passwordCheck(client, email, () =>
      this.checkBasic(email, password, key, generation),
    );
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
      credentialsVersion: account.credentialsVersion,
    };
    this.verified.remember(key, generation, principal);
    return principal;
  }
}
