import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationShutdown,
} from '@nestjs/common';
import { ChronicleConfig, ConfigError } from '@chronicle/config';
import { ChronicleMetrics } from '@chronicle/metrics';
import { EVENT_UPCASTERS, eventSchemaOf } from '@chronicle/domain';
import { join } from 'node:path';
import { EVENTS_FILE, SqliteCheckpointStore, SqliteEventStore } from './embedded';
import { EventStore, EventStoreObserver } from './event-store.port';
import { formatPosition } from './position';
import { CheckpointStore, databaseFromUri } from './processing';
import { DataKeyRing, ErasureLog, openDataKeyStore, PersonalDataEventStore } from './personal-data';
import { UpcasterRegistry, UpcastingEventStore } from './upcasting';

/** Closes the stores last, after the processors that use them have stopped. */
@Injectable()
class EventStoreCloser implements OnApplicationShutdown {
  constructor(
    @Inject(EventStore) private readonly store: EventStore,
    @Inject(CheckpointStore) private readonly checkpoints: CheckpointStore,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.checkpoints.close();
    await this.store.close();
  }
}

/**
 * Provides the EventStore port (EventStoreDB when EVENTSTORE_URL is set, else the embedded store)
 * and the processors' CheckpointStore (MongoDB when MONGODB_URI is set, else SQLite in DATA_DIR).
 */
@Global()
@Module({})
export class EventStoreModule {
  static forRoot(): DynamicModule {
    return {
      module: EventStoreModule,
      providers: [
        {
          provide: DataKeyRing,
          useFactory: async (config: ChronicleConfig): Promise<DataKeyRing> =>
            new DataKeyRing(await openDataKeyStore(config)),
          inject: [ChronicleConfig],
        },
        {
          provide: ErasureLog,
          useFactory: (config: ChronicleConfig): ErasureLog => new ErasureLog(config.erasureLog),
          inject: [ChronicleConfig],
        },
        {
          provide: EventStore,
          useFactory: (
            config: ChronicleConfig,
            keys: DataKeyRing,
            metrics?: ChronicleMetrics,
          ): Promise<EventStore> => openEventStore(config, metrics?.eventStore ?? null, keys),
          inject: [ChronicleConfig, DataKeyRing, { token: ChronicleMetrics, optional: true }],
        },
        {
          provide: CheckpointStore,
          // After the event store: on the default both share events.db, created by the event store.
          useFactory: (config: ChronicleConfig): Promise<CheckpointStore> => openCheckpointStore(config),
          inject: [ChronicleConfig, EventStore],
        },
        EventStoreCloser,
      ],
      exports: [EventStore, CheckpointStore, DataKeyRing, ErasureLog],
    };
  }
}

/**
 * The configured adapter, with personal values encrypted in what it stores and decrypted in what
 * it reads, its reads upcast to the newest event versions, its appends told to `observer`.
 */
export async function openEventStore(
  config: ChronicleConfig,
  observer: EventStoreObserver | null = null,
  keys?: DataKeyRing,
): Promise<EventStore> {
  keys ??= new DataKeyRing(await openDataKeyStore(config));
  return new UpcastingEventStore(
    new PersonalDataEventStore(
      await openAdapter(config, observer ?? undefined),
      keys,
      (type) => eventSchemaOf(type)?.personal,
    ),
    new UpcasterRegistry(EVENT_UPCASTERS),
    observer,
  );
}

// The client libraries of the servers are loaded only when configured: a sixth of the start-up.
async function openAdapter(
  config: ChronicleConfig,
  observer: EventStoreObserver | undefined,
): Promise<EventStore> {
  if (config.eventStoreUrl) {
    const { EsdbEventStore, InvalidConnectionStringError } = await import('./esdb');
    const logger = new Logger('EventStoreDB');
    try {
      return EsdbEventStore.connect(config.eventStoreUrl, {
        observer,
        onSubscriptionDropped: (error, attempt, delayMs) =>
          logger.warn({ err: error, attempt, delayMs }, 'Subscription dropped; resubscribing'),
        onCheckpointIgnored: (position, reason) =>
          logger.warn(
            `Ignored a filter checkpoint at ${formatPosition(position)}: ${reason}; an EventStoreDB release ` +
              'with KurrentDB PR 4892 and 4975 (24.10.5 or later) sends none',
          ),
      });
    } catch (error) {
      // Said as the variable's error, which main.ts prints in one line, with no stack.
      if (error instanceof InvalidConnectionStringError) {
        throw new ConfigError(
          'EVENTSTORE_URL',
          `is not a valid EventStoreDB connection string: ${error.detail}`,
        );
      }
      throw error;
    }
  }
  return SqliteEventStore.open(config.dataDir, { observer });
}

/** The processors' checkpoints: beside the read models in production, else in the embedded store's file. */
export async function openCheckpointStore(config: ChronicleConfig): Promise<CheckpointStore> {
  if (config.mongodbUri) {
    const { MongoCheckpointStore } = await import('./processing/mongo');
    return MongoCheckpointStore.connect(config.mongodbUri, databaseFromUri(config.mongodbUri) ?? 'chronicle');
  }
  // EventStoreDB with in-memory read models: a file of its own in DATA_DIR.
  return SqliteCheckpointStore.open(
    join(config.dataDir, config.eventStoreUrl ? 'checkpoints.db' : EVENTS_FILE),
  );
}
