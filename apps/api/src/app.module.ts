import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import { ApplicationModule, QueriesModule } from '@chronicle/application';
import { AuthModule, SecurityModule } from '@chronicle/auth';
import { ChronicleConfig, ChronicleConfigModule } from '@chronicle/config';
import { EventStoreModule } from '@chronicle/event-store';
import { ReadModelsModule } from '@chronicle/read-models';
import { AccountTokensController } from './account-tokens/account-tokens.controller';
import { CustomersController } from './customers/customers.controller';
import { HealthController } from './health/health.controller';
import { loggerParams } from './http/logging';
import { ProblemDetailsFilter } from './http/problem-details';
import { UsersController } from './users/users.controller';

@Module({})
export class AppModule {
  static forRoot(config: ChronicleConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ChronicleConfigModule.forRoot(config),
        LoggerModule.forRoot(loggerParams(config)),
        SecurityModule,
        EventStoreModule.forRoot(),
        ReadModelsModule.forRoot(),
        ApplicationModule,
        QueriesModule,
        AuthModule,
        TerminusModule,
      ],
      controllers: [CustomersController, UsersController, AccountTokensController, HealthController],
      providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    };
  }
}
