import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationShutdown,
} from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { EVENT_UPCASTERS } from '@chronicle/domain';
import { SqliteEventStore } from './embedded';
import { EsdbEventStore } from './esdb';
import { EventStore } from './event-store.port';
import { formatPosition } from './position';
import { UpcasterRegistry, UpcastingEventStore } from './upcasting';

/** Closes the store last, after the subscriptions that read from it have stopped. */
@Injectable()
class EventStoreCloser implements OnApplicationShutdown {
  constructor(@Inject(EventStore) private readonly store: EventStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}

/** Provides the EventStore port: EventStoreDB when EVENTSTORE_URL is set, else the embedded store. */
@Global()
@Module({})
export class EventStoreModule {
  static forRoot(): DynamicModule {
    return {
      module: EventStoreModule,
      providers: [
        {
          provide: EventStore,
          useFactory: (config: ChronicleConfig): EventStore => openEventStore(config),
          inject: [ChronicleConfig],
        },
        EventStoreCloser,
      ],
      exports: [EventStore],
    };
  }
}

/** The configured adapter, its reads upcast to the newest event versions. */
export function openEventStore(config: ChronicleConfig): EventStore {
  return new UpcastingEventStore(openAdapter(config), new UpcasterRegistry(EVENT_UPCASTERS));
}

function openAdapter(config: ChronicleConfig): EventStore {
  if (config.eventStoreUrl) {
    const logger = new Logger('EventStoreDB');
    return EsdbEventStore.connect(config.eventStoreUrl, {
      onSubscriptionDropped: (error, attempt, delayMs) =>
        logger.warn({ err: error, attempt, delayMs }, 'Subscription dropped; resubscribing'),
      onCheckpointIgnored: (position, reason) =>
        logger.warn(
          `Ignored a filter checkpoint at ${formatPosition(position)}: ${reason}; an EventStoreDB release ` +
            'with KurrentDB PR 4892 and 4975 (24.10.5 or later) sends none',
        ),
    });
  }
  return SqliteEventStore.open(config.dataDir);
}
