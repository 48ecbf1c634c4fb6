import { DynamicModule, Global, Inject, Injectable, Logger, Module, Optional } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { CheckpointStore, EventStore, HostedProcessor, Position } from '@chronicle/event-store';
import { ALL_PROJECTIONS } from './projections/all-projections';
import { MemoryReadStore } from './memory/memory-read-store';
import { ReadModelSnapshots } from './memory/snapshot/read-model-snapshots';
import { ProjectionProcessor } from './projection-processor';
import { ReadStore } from './read-store.port';

export const READ_MODELS_CHECKPOINT = 'read-models';

/**
 * The projections as a unit of the processor host: on the embedded store the models are first
 * read back from their snapshot, so that only the events after it are replayed, then the
 * processor follows the log. Its stop also closes the read store, whether it ran or not (with
 * MONGODB_URI the projector runs it, and the API only reads the store). Each process that holds
 * it provides it to its processor host.
 */
@Injectable()
export class InProcessProjections implements HostedProcessor {
  private started: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    @Inject(ProjectionProcessor) readonly processor: ProjectionProcessor,
    @Inject(ReadStore) private readonly readStore: ReadStore,
    @Optional() @Inject(ReadModelSnapshots) private readonly snapshots: ReadModelSnapshots | null,
  ) {}

  get isCaughtUp(): boolean {
    return this.processor.isCaughtUp;
  }

  get position(): Position | null {
    return this.processor.position;
  }

  get failed(): Promise<Error> {
    return this.processor.failed;
  }

  /** Resolves once caught up. The processor logs every error as it happens. */
  start(): Promise<void> {
    const restored = this.snapshots?.restore() ?? Promise.resolve();
    this.started = restored;
    return restored.then(() => {
      if (this.stopping) throw new Error(`The ${this.processor.name} processor stopped before starting`);
      return this.processor.start();
    });
  }

  async stop(): Promise<void> {
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
      ],
      exports: [ReadStore, ProjectionProcessor, ReadModelSnapshots],
    };
  }
}
