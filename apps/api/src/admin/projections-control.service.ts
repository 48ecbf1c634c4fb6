import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { GetProjectionStatusQuery } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { CheckpointStore, EventStore } from '@chronicle/event-store';
import {
  ALL_PROJECTIONS,
  MemoryReadStore,
  MemoryRebuildTarget,
  ProjectionsControlServer,
  READ_MODELS_CHECKPOINT,
  ReadModelRebuilder,
  ReadStore,
} from '@chronicle/read-models';

/**
 * Lets `projections rebuild|verify|status` reach this server's in-memory read models (embedded default)
 * through a Unix socket in DATA_DIR. With MongoDB the CLI works on the shared collections itself.
 */
@Injectable()
export class ProjectionsControlService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Projections');
  private server: ProjectionsControlServer | null = null;

  constructor(
    @Inject(EventStore) private readonly eventStore: EventStore,
    @Inject(ReadStore) private readonly readStore: ReadStore,
    @Inject(ChronicleConfig) private readonly config: ChronicleConfig,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(CheckpointStore) private readonly checkpoints: CheckpointStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!(this.readStore instanceof MemoryReadStore)) return;
    const rebuilder = new ReadModelRebuilder(
      this.eventStore,
      new MemoryRebuildTarget(this.readStore, READ_MODELS_CHECKPOINT),
      ALL_PROJECTIONS,
      READ_MODELS_CHECKPOINT,
      // Parks where this server's projection processor parks; the sagas' checkpoints are theirs to keep.
      { checkpoints: this.checkpoints, names: [] },
    );
    const server = new ProjectionsControlServer(rebuilder, this.config.dataDir, this.logger, async () => ({
      ...(await this.queries.execute(new GetProjectionStatusQuery())),
    }));
    await server.start();
    this.server = server;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.stop();
    this.server = null;
  }
}
