import { Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  AccessTokenCodec,
  AccountDirectory,
  AttemptLimits,
  PasswordHasher,
  Principal,
  RehashPasswordCommand,
  timeOrderedId,
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
  private readonly logger = new Logger('CredentialVerifier');

  constructor(
    private readonly codec: AccessTokenCodec,
    private readonly sessions: AccountSessions,
    private readonly directory: AccountDirectory,
    private readonly hasher: PasswordHasher,
    private readonly verified: VerifiedCredentials,
    private readonly limits: AttemptLimits,
    private readonly commands: CommandBus,
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
    const match = await this.hasher.verify(account.passwordHash, password);
    if (!match) return null;
    if (match === 'rehash') await this.rehash(account.id, password, account.passwordHash);
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

  /** Replaces a hash of the password as sent by one of it as prepared; a login never fails for it. */
  private async rehash(accountId: string, password: string, verifiedPasswordHash: string): Promise<void> {
    const context = {
      actor: accountId,
      correlationId: `rehash-${timeOrderedId()}`,
      auth: { method: 'basic' as const, tokenId: null },
    };
    try {
      await this.commands.execute(
        new RehashPasswordCommand(accountId, password, verifiedPasswordHash, context),
      );
    } catch (error) {
      this.logger.warn(
        { err: error, accountId },
        'Could not replace a password hash made before passwords were prepared',
      );
    }
  }
}
