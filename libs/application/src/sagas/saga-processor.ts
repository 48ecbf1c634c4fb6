import { CommandBus } from '@nestjs/cqrs';
import { DomainError } from '@chronicle/domain';
import {
  CheckpointStore,
  EventProcessor,
  EventProcessorOptions,
  EventStore,
  PermanentFailure,
  Position,
  ProcessorHandler,
  RecordedEvent,
} from '@chronicle/event-store';
import { MailRejectedError } from '@chronicle/mail';
import { traceSagaStep } from '@chronicle/tracing';
import { Saga } from './password.saga';

/** Events without work move the saga's checkpoint at most this often, not once per write. */
const IDLE_COMMIT_MS = 1_000;

/**
 * A saga as a processor handler: each event's command is run through the command bus, and the
 * checkpoint is kept in the CheckpointStore, so an event appended just before the process died is
 * still handled after a restart. Commands are idempotent: an event handled again after a crash
 * does nothing twice. A refusal (a domain error) or a bounced e-mail cannot succeed later, so the
 * event is parked at once.
 */
export class SagaHandler implements ProcessorHandler {
  readonly name: string;
  readonly eventTypes: readonly string[];
  readonly idleCommitMs = IDLE_COMMIT_MS;

  constructor(
    private readonly saga: Saga,
    private readonly commands: CommandBus,
    private readonly checkpoints: CheckpointStore,
  ) {
    this.name = saga.name;
    this.eventTypes = saga.eventTypes;
  }

  loadCheckpoint(): Promise<Position | null> {
    return this.checkpoints.load(this.name);
  }

  async handle(event: RecordedEvent): Promise<void> {
    const command = this.saga.commandFor(event);
    if (!command) return;
    try {
      // The step continues the trace of the event that caused it.
      await traceSagaStep(this.saga.name, event, () => this.commands.execute(command));
    } catch (error) {
      if (error instanceof DomainError || error instanceof MailRejectedError) {
        throw new PermanentFailure(error.message, { cause: error });
      }
      throw error;
    }
  }

  commit(upTo: Position): Promise<void> {
    return this.checkpoints.store(this.name, upTo);
  }
}

/** The event processor that runs a saga. */
export class SagaProcessor extends EventProcessor {
  constructor(
    saga: Saga,
    eventStore: EventStore,
    commands: CommandBus,
    checkpoints: CheckpointStore,
    options: Omit<EventProcessorOptions, 'parking'> = {},
  ) {
    super(eventStore, new SagaHandler(saga, commands, checkpoints), {
      retryDelayMs: 250,
      maxRetryDelayMs: 30_000,
      ...options,
      parking: checkpoints,
    });
  }
}
