import { Module } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { EventStore } from '@chronicle/event-store';
import { IdempotencyKeys } from './idempotency-keys';
import { IdempotencyStore } from './idempotency-store';
import { SqliteIdempotencyStore } from './sqlite-idempotency-store';

/**
 * Idempotency-Key on every POST and PATCH, its records shared by every instance (see IdempotencyKeys);
 * its guard is bound to those routes by withIdempotencyKeys.
 */
@Module({
  providers: [
    {
      provide: IdempotencyStore,
      useFactory: async (config: ChronicleConfig): Promise<IdempotencyStore> => {
        if (!config.mongodbUri) return new SqliteIdempotencyStore(config.dataDir);
        // Loaded only when configured, like every MongoDB adapter.
        const { MongoIdempotencyStore } = await import('./mongo-idempotency-store');
        return new MongoIdempotencyStore(config.mongodbUri);
      },
      inject: [ChronicleConfig],
    },
    {
      provide: IdempotencyKeys,
      useFactory: (store: IdempotencyStore, log: EventStore, config: ChronicleConfig) =>
        new IdempotencyKeys(store, log, config),
      inject: [IdempotencyStore, EventStore, ChronicleConfig],
    },
  ],
  exports: [IdempotencyKeys],
})
export class IdempotencyModule {}
