import 'reflect-metadata';
import { DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Logger, LoggerModule } from 'nestjs-pino';
import type { Logger as PinoLogger } from 'pino';
import { InProcessSagasModule } from '@chronicle/application';
import { ChronicleConfig, ChronicleConfigModule } from '@chronicle/config';
import { EventStoreModule } from '@chronicle/event-store';
import { MailModule } from '@chronicle/mail';
import { ChronicleMetrics } from '@chronicle/metrics';
import { startTracing } from '@chronicle/tracing';
import { createLogger, loggerModuleParams, startupLogger } from '../http/logging';
import type { SagaWorkerData, ToSagaWorker } from './saga-worker.host';

/**
 * What the worker thread runs: the sagas, with their own connections to the stores and their own
 * Mailer, and nothing of the HTTP side. Its metrics are served by the API (SagaWorkerHost).
 */
@Module({})
class SagaWorkerModule {
  static forRoot(config: ChronicleConfig, metrics: ChronicleMetrics, logger: PinoLogger): DynamicModule {
    return {
      module: SagaWorkerModule,
      imports: [
        ChronicleConfigModule.forRoot(config),
        {
          module: class SagaWorkerMetricsModule {},
          global: true,
          providers: [{ provide: ChronicleMetrics, useValue: metrics }],
          exports: [ChronicleMetrics],
        },
        LoggerModule.forRoot(loggerModuleParams(logger)),
        EventStoreModule.forRoot(),
        { module: MailModule, global: true },
        InProcessSagasModule,
      ],
    };
  }
}

async function runSagaWorker({ config: cloned, stdoutIsTTY }: SagaWorkerData): Promise<void> {
  // A Buffer crosses threads as a Uint8Array.
  const config = Object.assign(new ChronicleConfig(), cloned, {
    tokenSecret: Buffer.from(cloned.tokenSecret),
  });
  const logger = createLogger(config, { isTTY: stdoutIsTTY });
  const tracing = startTracing('chronicle-api');
  const metrics = new ChronicleMetrics();
  const app = await NestFactory.createApplicationContext(SagaWorkerModule.forRoot(config, metrics, logger), {
    logger: startupLogger(logger),
    abortOnError: false,
  });
  app.useLogger(app.get(Logger));
  const port = parentPort!;
  port.on('message', (message: ToSagaWorker) => {
    if (message.type === 'metrics') {
      void metrics.registry
        .getMetricsAsJSON()
        .then((snapshot) => port.postMessage({ type: 'metrics', id: message.id, snapshot }));
    } else {
      // The saga's batch in hand finishes, its checkpoint is stored, the stores close; then the
      // thread has nothing left to run and ends.
      void app
        .close()
        .then(() => tracing?.shutdown())
        .finally(() => port.close());
    }
  });
  port.postMessage({ type: 'started' });
}

if (!isMainThread)
  void runSagaWorker(workerData as SagaWorkerData).catch((error: unknown) => {
    // Thrown to the host's 'error' listener, which logs it and starts the worker again later.
    setImmediate(() => {
      throw error;
    });
  });
