import { Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CheckpointStore, EventStore } from '@chronicle/event-store';
import { CompletePasswordChangeHandler } from '../accounts/complete-password-change/complete-password-change.handler';
import { PasswordLinkMailer } from '../accounts/password-link-mailer';
import { SendInvitationEmailHandler } from '../accounts/send-invitation-email/send-invitation-email.handler';
import { SendPasswordResetEmailHandler } from '../accounts/send-password-reset-email/send-password-reset-email.handler';
import { CommandCoreModule } from '../shared/command-core.module';
import { passwordSaga } from './password.saga';
import { SagaProcessor } from './saga-processor';

/** Runs the sagas in this process, from start-up to shutdown. */
@Injectable()
export class InProcessSagas implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(SagaProcessor) private readonly processor: SagaProcessor) {}

  onApplicationBootstrap(): void {
    // In the background: a saga never delays start-up.
    void this.processor.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.processor.stop();
  }
}

/**
 * The commands the sagas send, and their handlers: no password hashing, no tokens, so a sagas
 * host needs only the EventStore port, the Mailer and the configuration. The CLI imports it to
 * retry parked messages.
 */
@Module({
  imports: [CommandCoreModule],
  providers: [
    PasswordLinkMailer,
    SendPasswordResetEmailHandler,
    SendInvitationEmailHandler,
    CompletePasswordChangeHandler,
  ],
  exports: [CommandCoreModule],
})
export class SagaCommandsModule {}

/**
 * The sagas' processor, not started: a host starts it, e.g. the projector while it holds its lease.
 * Needs EventStore, CheckpointStore, Mailer and the configuration from the host.
 */
@Module({
  imports: [SagaCommandsModule],
  providers: [
    {
      provide: SagaProcessor,
      useFactory: (store: EventStore, commands: CommandBus, checkpoints: CheckpointStore) =>
        new SagaProcessor(passwordSaga, store, commands, checkpoints),
      inject: [EventStore, CommandBus, CheckpointStore],
    },
  ],
  exports: [SagaProcessor],
})
export class SagasModule {}

/** The sagas running in this process from start-up to shutdown: the API on the embedded default. */
@Module({ imports: [SagasModule], providers: [InProcessSagas] })
export class InProcessSagasModule {}
