import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { Principal } from '@chronicle/application';
import { CredentialVerifier } from './credential-verifier';

/** `Authorization: Bearer <token>` or `?access_token=<token>` (RFC 6750). */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly verifier: CredentialVerifier) {
    super();
  }

  async validate(token: string): Promise<Principal | false> {
    return (await this.verifier.bearer(token)) ?? false;
  }
}
