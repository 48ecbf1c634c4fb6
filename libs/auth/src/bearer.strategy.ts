import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { AccessTokenCodec, Principal } from '@chronicle/application';
import { AccountSessions } from './account-sessions';

/** `Authorization: Bearer <token>` or `?access_token=<token>` (RFC 6750). */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly codec: AccessTokenCodec,
    private readonly sessions: AccountSessions,
  ) {
    super();
  }

  async validate(token: string): Promise<Principal | false> {
    const claims = this.codec.verify(token);
    return (claims && (await this.sessions.principalFor(claims))) ?? false;
  }
}
