import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { AuditModule } from '@chronicle/application';
import { ChronicleConfig, ChronicleConfigModule } from '@chronicle/config';
import { EventStoreModule } from '@chronicle/event-store';

/** What reading the history needs (`audit`, `users get`): the event store only, never the read models. */
@Module({})
export class HistoryCliModule {
  static forRoot(config: ChronicleConfig): DynamicModule {
    return {
      module: HistoryCliModule,
      imports: [ChronicleConfigModule.forRoot(config), CqrsModule, EventStoreModule.forRoot(), AuditModule],
    };
  }
}

/** Runs `work` in the history's application context, closed afterwards whatever happens. */
export async function withHistory<T>(
  config: ChronicleConfig,
  work: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  const app = await NestFactory.createApplicationContext(HistoryCliModule.forRoot(config), {
    logger: ['error'],
  });
  try {
    return await work(app);
  } finally {
    await app.close();
  }
}
