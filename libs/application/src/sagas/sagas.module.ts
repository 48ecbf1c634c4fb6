import { Module } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { CheckpointStore, EventStore, ProcessorHost } from '@chronicle/event-store';
import { CompletePasswordChangeHandler } from '../accounts/complete-password-change/complete-password-change.handler';
import { PasswordLinkMailer } from '../accounts/password-link-mailer';
import { SendInvitationEmailHandler } from '../accounts/send-invitation-email/send-invitation-email.handler';
import { SendPasswordResetEmailHandler } from '../accounts/send-password-reset-email/send-password-reset-email.handler';
import { CompleteErasureHandler } from '../personal-data/complete-erasure/complete-erasure.handler';
import { ErasureCompletion } from '../personal-data/complete-erasure/erasure-completion';
import { CommandCoreModule } from '../shared/command-core.module';
import { passwordSaga } from './password.saga';
import { SagaProcessor } from './saga-processor';

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
    ErasureCompletion,
    CompleteErasureHandler,
  ],
  exports: [CommandCoreModule, ErasureCompletion],
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

/** The sagas' worker thread (the API's on the embedded default): its processor host runs the sagas placed there. */
@Module({
  imports: [SagasModule],
  providers: [
    {
      provide: ProcessorHost,
      useFactory: (config: ChronicleConfig, sagas: SagaProcessor) =>
        new ProcessorHost(config, 'saga-worker', { 'saga:password': sagas }, { startOnBootstrap: true }),
      inject: [ChronicleConfig, SagaProcessor],
    },
  ],
})
export class InProcessSagasModule {}
