import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { emailStreamNameFor, PasswordResetRequested, resetRequestStreamName } from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { Clock } from '../../shared/clock';
import { toNewEvent } from '../../shared/event-sourced-repository';
import { AccountDirectory } from '../account-directory';
import { RequestPasswordResetCommand } from './request-password-reset.command';

/**
 * Stores the request durably and nothing else: the same single append for every address, known
 * or not, so neither the answer nor its timing tells whether an account exists. The saga does the
 * rest after the response. The address is named by its keyed hash only.
 */
@CommandHandler(RequestPasswordResetCommand)
export class RequestPasswordResetHandler implements ICommandHandler<RequestPasswordResetCommand, void> {
  constructor(
    private readonly store: EventStore,
    private readonly directory: AccountDirectory,
    private readonly clock: Clock,
  ) {}

  async execute({ email, context }: RequestPasswordResetCommand): Promise<void> {
    // After the reservations are keyed: the request must follow its address's reservation.
    const key = await this.directory.addressKey(email);
    const now = this.clock.now();
    const event: PasswordResetRequested = {
      type: 'PasswordResetRequested.v2',
      data: { reservation: emailStreamNameFor(key), requestedAt: now.toISOString() },
    };
    await this.store.append(resetRequestStreamName(key), [toNewEvent(event, context, now)], 'any');
  }
}
