import { Command } from '@nestjs/cqrs';
import { PasswordChanged, PasswordReset } from '@chronicle/domain';
import { RecordedEvent } from '@chronicle/event-store';

/** Saga step after a PasswordReset or PasswordChanged event. */
export class CompletePasswordChangeCommand extends Command<void> {
  constructor(readonly change: RecordedEvent<PasswordReset['data'] | PasswordChanged['data']>) {
    super();
  }
}
