import { CommandBus } from '@nestjs/cqrs';
import { CheckpointStore, EventStore } from '@chronicle/event-store';
import { errorMessage } from '@chronicle/config';
import { passwordSaga } from './password.saga';
import { SagaHandler } from './saga-processor';

/** The sagas whose parked messages an operator can retry. */
const SAGAS = [passwordSaga];

/** A parked message that cannot be retried or dropped as asked. */
export class ParkedMessageError extends Error {
  constructor(
    readonly code: 'parked-message-not-found' | 'not-retryable' | 'retry-failed',
    message: string,
  ) {
    super(message);
    this.name = 'ParkedMessageError';
  }
}

/**
 * Runs a parked saga message once more, here and now (its commands are idempotent, so a server
 * handling it meanwhile does no harm): unparked when it succeeds, parked again with the new
 * reason when it fails. A projection's parked event is not retried: once the projection is
 * fixed, `projections rebuild` applies it in order.
 */
export async function retryParkedMessage(
  eventStore: EventStore,
  checkpoints: CheckpointStore,
  commands: CommandBus,
  processor: string,
  eventId: string,
): Promise<{ retried: true }> {
  const parked = (await checkpoints.parked(processor)).find((message) => message.eventId === eventId);
  if (!parked)
    throw new ParkedMessageError('parked-message-not-found', `${processor} has no parked message ${eventId}`);
  const saga = SAGAS.find((candidate) => candidate.name === processor);
  if (!saga) {
    throw new ParkedMessageError(
      'not-retryable',
      `${processor} is not a saga: fix the projection, then run \`projections rebuild\``,
    );
  }
  const [event] = await eventStore.readStream(parked.stream, { fromRevision: parked.revision });
  if (!event || event.id !== eventId) {
    throw new ParkedMessageError(
      'parked-message-not-found',
      `Event ${eventId} is no longer in ${parked.stream}`,
    );
  }
  try {
    await new SagaHandler(saga, commands, checkpoints).handle(event);
  } catch (error) {
    const reason = errorMessage(error);
    await checkpoints.park({
      ...parked,
      reason,
      attempts: parked.attempts + 1,
      parkedAt: new Date().toISOString(),
    });
    throw new ParkedMessageError('retry-failed', `${eventId} failed again and stays parked: ${reason}`);
  }
  await checkpoints.unpark(processor, eventId);
  return { retried: true };
}
