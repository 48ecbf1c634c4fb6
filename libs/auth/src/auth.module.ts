import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessTokenCodec, ApplicationModule, PasswordHasher } from '@chronicle/application';
import { AccountSessions } from './account-sessions';
import { Argon2PasswordHasher } from './argon2-password-hasher';
import { ChronicleAuthGuard } from './chronicle-auth.guard';
import { CredentialVerifier } from './credential-verifier';
import { HmacAccessTokenCodec } from './hmac-access-token-codec';
import { VerifiedCredentials } from './verified-credentials';

/** Authentication for the HTTP app: strategies, the global guard and the token sessions. */
@Module({
  imports: [ApplicationModule],
  providers: [
    AccountSessions,
    CredentialVerifier,
    VerifiedCredentials,
    { provide: APP_GUARD, useClass: ChronicleAuthGuard },
  ],
  exports: [AccountSessions, CredentialVerifier],
})
export class AuthModule {}

/** The adapters of the application's security ports: Argon2id hashing and HMAC-signed tokens. */
@Global()
@Module({
  providers: [
    { provide: PasswordHasher, useClass: Argon2PasswordHasher },
    { provide: AccessTokenCodec, useClass: HmacAccessTokenCodec },
  ],
  exports: [PasswordHasher, AccessTokenCodec],
})
export class SecurityModule {}
