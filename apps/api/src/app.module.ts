import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import {
  AccountDirectory,
  ApplicationModule,
  AuditModule,
  ProjectionsAdminModule,
  QueriesModule,
} from '@chronicle/application';
import { AccountSessions, AuthModule, SecurityModule } from '@chronicle/auth';
import { ChronicleConfig, ChronicleConfigModule } from '@chronicle/config';
import { EventStoreModule, ProcessorHost } from '@chronicle/event-store';
import { MailModule } from '@chronicle/mail';
import { ChronicleMetrics, MetricsModule } from '@chronicle/metrics';
import { InProcessProjections, ReadModelsModule } from '@chronicle/read-models';
import { AccountsController } from './accounts/accounts.controller';
import { AccountPasswordController } from './account-password/account-password.controller';
import { AccountTokensController } from './account-tokens/account-tokens.controller';
import { ProjectionsControlService } from './admin/projections-control.service';
import { ProjectionsController } from './admin/projections.controller';
import { AuditController } from './audit/audit.controller';
import { HistoryChainWatch } from './audit/history-chain-watch.service';
import { CustomersController } from './customers/customers.controller';
import { HealthController } from './health/health.controller';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { withIdempotencyKeys } from './idempotency/idempotency.guard';
import { loggerModuleParams } from './http/logging';
import { ProblemDetailsFilter } from './http/problem-details';
import { QueryValidationPipe } from './http/validation';
import { SagaWorkerHost } from './sagas/saga-worker.host';
import { UsersController } from './users/users.controller';

@Module({})
export class AppModule {
  static forRoot(config: ChronicleConfig, logger: Logger, metrics: ChronicleMetrics): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ChronicleConfigModule.forRoot(config),
        MetricsModule.forRoot(metrics),
        LoggerModule.forRoot(loggerModuleParams(logger)),
        SecurityModule,
        { module: MailModule, global: true },
        EventStoreModule.forRoot(),
        ReadModelsModule.forRoot(),
        ApplicationModule,
        QueriesModule,
        AuditModule,
        ProjectionsAdminModule,
        AuthModule,
        IdempotencyModule,
      ],
      controllers: withIdempotencyKeys([
        CustomersController,
        UsersController,
        AccountsController,
        AccountTokensController,
        AccountPasswordController,
        HealthController,
        AuditController,
        ProjectionsController,
      ]),
      providers: [
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
        { provide: APP_PIPE, useClass: QueryValidationPipe },
        ProjectionsControlService,
        HistoryChainWatch,
        SagaWorkerHost,
        InProcessProjections,
        {
          // This process's background work; processorPlacement decides which of it runs here.
          provide: ProcessorHost,
          useFactory: (
            projections: InProcessProjections,
            sagas: SagaWorkerHost,
            sessions: AccountSessions,
            directory: AccountDirectory,
          ) =>
            new ProcessorHost(
              config,
              'api',
              {
                'read-models': projections,
                'saga:password': sagas,
                'account-sessions': sessions,
              },
              // What requests read: readiness waits for it.
              {
                startOnBootstrap: true,
                readiness: { 'read-models': 'readModels', 'account-sessions': 'sessions' },
                // Started with the rest, so that the first request naming an address seldom waits for all of it.
                jobs: { 'reservation-keys': () => directory.reservationsKeyed() },
              },
            ),
          inject: [InProcessProjections, SagaWorkerHost, AccountSessions, AccountDirectory],
        },
      ],
    };
  }
}
