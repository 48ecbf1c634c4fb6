import { Command } from '@nestjs/cqrs';
import { PasswordResetRequested } from '@chronicle/domain';
import { RecordedEvent } from '@chronicle/event-store';

/** Saga step for a PasswordResetRequested event: issue a token and e-mail it, once per request. */
export class SendPasswordResetEmailCommand extends Command<void> {
  constructor(readonly request: RecordedEvent<PasswordResetRequested['data']>) {
    super();
  }
}
