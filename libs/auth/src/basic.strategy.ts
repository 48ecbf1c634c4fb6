import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BasicStrategy as Strategy } from 'passport-http';
import { Principal } from '@chronicle/application';
import { CredentialVerifier } from './credential-verifier';

/** `Authorization: Basic base64(email:password)`; what a client sends for `email:password@host`. */
@Injectable()
export class BasicStrategy extends PassportStrategy(Strategy, 'basic') {
  constructor(private readonly verifier: CredentialVerifier) {
    super();
  }

  async validate(email: string, password: string): Promise<Principal | false> {
    return (await this.verifier.basic(email, password)) ?? false;
  }
}
