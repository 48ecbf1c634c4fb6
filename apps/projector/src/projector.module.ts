import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { MongoClient } from 'mongodb';
import { LoggerModule } from 'nestjs-pino';
import { ProjectionsAdminModule, SagaProcessor, SagasModule } from '@chronicle/application';
import { ChronicleConfig, ChronicleConfigModule, logDestination } from '@chronicle/config';
import { databaseFromUri, EventStoreModule, ProcessorHost } from '@chronicle/event-store';
import { MailModule } from '@chronicle/mail';
import { ChronicleMetrics, MetricsModule } from '@chronicle/metrics';
import { InProcessProjections, ReadModelsModule } from '@chronicle/read-models';
import { LeaseRecord, MongoLease } from './mongo-lease';
import { ProjectorHealth } from './projector-health';
import { Projector } from './projector';
import { ProjectorSettings } from './projector-settings';

export const LEASE_NAME = 'projector';

/** The lease's own connection, closed after the projector has released the lease. */
@Injectable()
class LeaseClientCloser implements OnApplicationShutdown {
  constructor(@Inject(MongoClient) private readonly client: MongoClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}

/** The projector process: projections (and sagas) fed by the event store, guarded by a lease in MongoDB. */
@Module({})
export class ProjectorModule {
  static forRoot(
    config: ChronicleConfig,
    settings: ProjectorSettings,
    metrics: ChronicleMetrics,
  ): DynamicModule {
    return {
      module: ProjectorModule,
      imports: [
        ChronicleConfigModule.forRoot(config),
        MetricsModule.forRoot(metrics),
        LoggerModule.forRoot({ pinoHttp: [{ level: config.logLevel }, logDestination()] }),
        EventStoreModule.forRoot(),
        ReadModelsModule.forRoot(),
        // What the sagas' commands need besides the stores: the Mailer.
        { module: MailModule, global: true },
        SagasModule,
        ProjectionsAdminModule,
      ],
      providers: [
        {
          provide: MongoClient,
          // Majority reads and writes: a lease taken over during a failover is never rolled back.
          useFactory: () =>
            MongoClient.connect(settings.mongodbUri, {
              writeConcern: { w: 'majority' },
              readConcern: { level: 'majority' },
            }),
        },
        LeaseClientCloser,
        InProcessProjections,
        {
          provide: MongoLease,
          useFactory: (client: MongoClient) =>
            new MongoLease(
              client
                .db(databaseFromUri(settings.mongodbUri) ?? 'chronicle')
                .collection<LeaseRecord>('leases'),
              { name: LEASE_NAME, ttlMs: settings.leaseTtlMs },
            ),
          inject: [MongoClient],
        },
        {
          // What this process runs while it holds the lease; the Projector starts it then.
          provide: ProcessorHost,
          useFactory: (projections: InProcessProjections, sagas: SagaProcessor) =>
            new ProcessorHost(
              config,
              'projector',
              {
                'read-models': projections,
                'saga:password': sagas,
              },
              { startOnBootstrap: false },
            ),
          inject: [InProcessProjections, SagaProcessor],
        },
        Projector,
        ProjectorHealth,
      ],
    };
  }
}
