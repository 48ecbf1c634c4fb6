import { Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { EventStore } from '@chronicle/event-store';
import { ReadStore } from '@chronicle/read-models';
import { ApplicationModule } from '../application.module';
import { passwordSaga } from './password.saga';
import { SagaRunner } from './saga-runner';

/** Runs the sagas in this process, from start-up to shutdown. */
@Injectable()
export class InProcessSagas implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(SagaRunner) private readonly runner: SagaRunner) {}

  onApplicationBootstrap(): void {
    this.runner.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.runner.stop();
  }
}

/**
 * The sagas' runner, not started: a host starts it, e.g. the projector while it holds its lease.
 * Needs EventStore, ReadStore (for the checkpoint), Mailer and the security ports from the host.
 */
@Module({
  imports: [ApplicationModule],
  providers: [
    {
      provide: SagaRunner,
      useFactory: (store: EventStore, readStore: ReadStore, commands: CommandBus) =>
        new SagaRunner(passwordSaga, store, readStore, commands),
      inject: [EventStore, ReadStore, CommandBus],
    },
  ],
  exports: [SagaRunner],
})
export class SagasModule {}

/** The sagas running in this process from start-up to shutdown: the API on the embedded default. */
@Module({ imports: [SagasModule], providers: [InProcessSagas] })
export class InProcessSagasModule {}
