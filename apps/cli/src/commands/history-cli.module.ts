import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { hostname } from 'node:os';
import { AuditModule, Clock, SecurityEvents, SystemClock } from '@chronicle/application';
import { ChronicleConfig, ChronicleConfigModule } from '@chronicle/config';
import { EventStoreModule } from '@chronicle/event-store';
import { cliRun } from '../cli-run';

/** What reading the history needs (`audit`, `users get`, `export`): the event store only, never the read models. */
@Module({})
export class HistoryCliModule {
  static forRoot(config: ChronicleConfig): DynamicModule {
    return {
      module: HistoryCliModule,
      imports: [ChronicleConfigModule.forRoot(config), CqrsModule, EventStoreModule.forRoot(), AuditModule],
      // Reads of the history are recorded as the API records them (AuditRead.v1).
      providers: [{ provide: Clock, useClass: SystemClock }, SecurityEvents],
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

/**
 * Records that this run reads the history (`command`, e.g. `audit verify`), as an API read is
 * recorded: an `AuditRead.v1` written by `cli:<OS user>`. Written before the run reads anything (a
 * run is one read, so there is nothing to coalesce it with), so that what it reads, an export's
 * head or a verified chain, already holds it.
 */
export async function recordHistoryRead(app: INestApplicationContext, command: string): Promise<void> {
  const run = cliRun();
  const security = app.get(SecurityEvents);
  security.observe(
    'AuditRead.v1',
    {
      email: null,
      accountId: run.actor,
      client: hostname(),
      userAgent: 'chronicle-cli',
      route: `CLI ${command}`,
    },
    run,
  );
  await security.flush();
}
