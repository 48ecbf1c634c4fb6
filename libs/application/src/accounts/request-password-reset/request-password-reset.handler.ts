import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { emailHash, PasswordResetRequested, resetRequestStreamName } from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { Clock } from '../../shared/clock';
import { toNewEvent } from '../../shared/event-sourced-repository';
import { RequestPasswordResetCommand } from './request-password-reset.command';

/**
 * Stores the request durably and nothing else: the same single append for every address, known
 * or not, so neither the answer nor its timing tells whether an account exists. The saga does the
 * rest after the response.
 */
@CommandHandler(RequestPasswordResetCommand)
export class RequestPasswordResetHandler implements ICommandHandler<RequestPasswordResetCommand, void> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ email, context }: RequestPasswordResetCommand): Promise<void> {
    const now = this.clock.now();
    const hash = emailHash(email);
    const event: PasswordResetRequested = {
      type: 'PasswordResetRequested.v1',
      data: { emailHash: hash, requestedAt: now.toISOString() },
    };
    await this.store.append(resetRequestStreamName(hash), [toNewEvent(event, context, now)], 'any');
  }
}
