import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { CheckpointStore, EventStore } from '@chronicle/event-store';
import { ALL_PROJECTIONS } from './projections/all-projections';
import { MemoryReadStore } from './memory/memory-read-store';
import { ReadModelSnapshots } from './memory/snapshot/read-model-snapshots';
import { ProjectionProcessor } from './projection-processor';
import { ReadStore } from './read-store.port';

export const READ_MODELS_CHECKPOINT = 'read-models';

/**
 * Runs the projections in this process on the embedded default: replays the history after start-up,
 * then follows live events. With MONGODB_URI the read models are shared, and the projector process
 * (apps/projector) runs them instead.
 */
@Injectable()
export class InProcessProjections implements OnApplicationBootstrap, OnApplicationShutdown {
  private started: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    @Inject(ProjectionProcessor) readonly processor: ProjectionProcessor,
    @Inject(ReadStore) private readonly readStore: ReadStore,
    @Inject(ChronicleConfig) private readonly config: ChronicleConfig,
    @Optional() @Inject(ReadModelSnapshots) private readonly snapshots: ReadModelSnapshots | null,
  ) {}

  /**
   * In the background: the API listens at once whatever the history, and readiness says how far
   * the catch-up is. On the embedded store the models are first read back from their snapshot,
   * so that only the events after it are replayed. The processor logs every error as it happens.
   */
  onApplicationBootstrap(): void {
    if (this.config.mongodbUri) return;
    this.started = (async () => {
      await this.snapshots?.restore();
      if (!this.stopping) void this.processor.start();
    })();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.started;
    await this.processor.stop();
    await this.snapshots?.stop();
    await this.readStore.close();
  }
}

/** Provides the ReadStore port (MongoDB when MONGODB_URI is set, else in memory) and its projection processor. */
@Global()
@Module({})
export class ReadModelsModule {
  static forRoot(): DynamicModule {
    return {
      module: ReadModelsModule,
      providers: [
        {
          provide: ReadStore,
          useFactory: async (config: ChronicleConfig): Promise<ReadStore> => {
            if (!config.mongodbUri) return new MemoryReadStore();
            // Loaded only when configured: the driver is a tenth of the start-up.
            const { MongoReadStore } = await import('./mongo');
            return MongoReadStore.connect(config.mongodbUri);
          },
          inject: [ChronicleConfig],
        },
        {
          // The in-memory models on the embedded store only: a snapshot is tied to its store-id.
          provide: ReadModelSnapshots,
          useFactory: (config: ChronicleConfig, readStore: ReadStore, eventStore: EventStore) =>
            readStore instanceof MemoryReadStore && !config.eventStoreUrl
              ? new ReadModelSnapshots(readStore, eventStore, {
                  dataDir: config.dataDir,
                  checkpointName: READ_MODELS_CHECKPOINT,
                  logger: new Logger('ReadModelSnapshots'),
                  policy: { everyEvents: config.readModelSnapshotEvents },
                })
              : null,
          inject: [ChronicleConfig, ReadStore, EventStore],
        },
        {
          provide: ProjectionProcessor,
          useFactory: (store: EventStore, readStore: ReadStore, parking: CheckpointStore) =>
            new ProjectionProcessor(store, readStore, ALL_PROJECTIONS, {
              checkpointName: READ_MODELS_CHECKPOINT,
              parking,
            }),
          inject: [EventStore, ReadStore, CheckpointStore],
        },
        InProcessProjections,
      ],
      exports: [ReadStore, ProjectionProcessor, ReadModelSnapshots],
    };
  }
}
