import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BasicStrategy as Strategy } from 'passport-http';
import { AccountDirectory, PasswordHasher, Principal } from '@chronicle/application';
import { VerifiedCredentials } from './verified-credentials';

/** `Authorization: Basic base64(email:password)`; what a client sends for `email:password@host`. */
@Injectable()
export class BasicStrategy extends PassportStrategy(Strategy, 'basic') {
  constructor(
    private readonly directory: AccountDirectory,
    private readonly hasher: PasswordHasher,
    private readonly verified: VerifiedCredentials,
  ) {
    super();
  }

  async validate(email: string, password: string): Promise<Principal | false> {
    const { key, generation } = this.verified.keyFor(email, password);
    const cached = this.verified.lookup(key);
    if (cached) return cached;
    const account = await this.directory.findByEmail(email);
    if (!account) {
      // As slow as a wrong password, so that the answer does not tell which addresses exist.
      await this.hasher.verifyDummy(password);
      return false;
    }
    if (!(await this.hasher.verify(account.passwordHash, password))) return false;
    const principal: Principal = {
      accountId: account.id,
      userId: account.userId,
      roles: account.roles,
      method: 'basic',
    };
    this.verified.remember(key, generation, principal);
    return principal;
  }
}
