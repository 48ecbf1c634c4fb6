import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { EventStore } from '@chronicle/event-store';
import { ALL_PROJECTIONS } from './projections/all-projections';
import { MemoryReadStore } from './memory/memory-read-store';
import { MongoReadStore } from './mongo/mongo-read-store';
import { ProjectionRunner } from './projection-runner';
import { ReadStore } from './read-store.port';

export const READ_MODELS_CHECKPOINT = 'read-models';

/**
 * Runs the projections in this process on the embedded default: replays the history at start-up,
 * then follows live events. With MONGODB_URI the read models are shared, and the projector process
 * (apps/projector) runs them instead.
 */
@Injectable()
export class InProcessProjections implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(ProjectionRunner) readonly runner: ProjectionRunner,
    @Inject(ReadStore) private readonly readStore: ReadStore,
    @Inject(ChronicleConfig) private readonly config: ChronicleConfig,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    if (this.config.mongodbUri) return Promise.resolve();
    return this.runner.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.stop();
    await this.readStore.close();
  }
}

/** Provides the ReadStore port (MongoDB when MONGODB_URI is set, else in memory) and its projection runner. */
@Global()
@Module({})
export class ReadModelsModule {
  static forRoot(): DynamicModule {
    return {
      module: ReadModelsModule,
      providers: [
        {
          provide: ReadStore,
          useFactory: async (config: ChronicleConfig): Promise<ReadStore> =>
            config.mongodbUri ? await MongoReadStore.connect(config.mongodbUri) : new MemoryReadStore(),
          inject: [ChronicleConfig],
        },
        {
          provide: ProjectionRunner,
          useFactory: (store: EventStore, readStore: ReadStore) =>
            new ProjectionRunner(store, readStore, ALL_PROJECTIONS, {
              checkpointName: READ_MODELS_CHECKPOINT,
            }),
          inject: [EventStore, ReadStore],
        },
        InProcessProjections,
      ],
      exports: [ReadStore, ProjectionRunner],
    };
  }
}
