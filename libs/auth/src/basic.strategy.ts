import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BasicStrategy as Strategy } from 'passport-http';
import { AccountDirectory, PasswordHasher, Principal } from '@chronicle/application';

/** `Authorization: Basic base64(email:password)`; what a client sends for `email:password@host`. */
@Injectable()
export class BasicStrategy extends PassportStrategy(Strategy, 'basic') {
  constructor(
    private readonly directory: AccountDirectory,
    private readonly hasher: PasswordHasher,
  ) {
    super();
  }

  async validate(email: string, password: string): Promise<Principal | false> {
    const account = await this.directory.findByEmail(email);
    if (!account) {
      // As slow as a wrong password, so that the answer does not tell which addresses exist.
      await this.hasher.verifyDummy(password);
      return false;
    }
    if (!(await this.hasher.verify(account.passwordHash, password))) return false;
    return { accountId: account.id, userId: account.userId, roles: account.roles, method: 'basic' };
  }
}
