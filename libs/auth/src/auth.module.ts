import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessTokenCodec, ApplicationModule, AttemptCounters, PasswordHasher } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { AccountSessions } from './account-sessions';
import { Argon2PasswordHasher } from './argon2-password-hasher';
import { SqliteAttemptCounters } from './attempt-counters/sqlite-attempt-counters';
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

/**
 * The adapters of the application's security ports: Argon2id hashing, HMAC-signed tokens, and
 * attempt counters shared by every instance (MongoDB with MONGODB_URI, else DATA_DIR/limits.db).
 */
@Global()
@Module({
  providers: [
    { provide: PasswordHasher, useClass: Argon2PasswordHasher },
    { provide: AccessTokenCodec, useClass: HmacAccessTokenCodec },
    {
      provide: AttemptCounters,
      useFactory: async (config: ChronicleConfig): Promise<AttemptCounters> => {
        if (!config.mongodbUri) return new SqliteAttemptCounters(config.dataDir);
        // Loaded only when configured, like every MongoDB adapter.
        const { MongoAttemptCounters } = await import('./attempt-counters/mongo-attempt-counters');
        return new MongoAttemptCounters(config.mongodbUri);
      },
      inject: [ChronicleConfig],
    },
  ],
  exports: [PasswordHasher, AccessTokenCodec, AttemptCounters],
})
export class SecurityModule {}
