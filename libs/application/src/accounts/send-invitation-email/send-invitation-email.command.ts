import { Command } from '@nestjs/cqrs';
import { AccountInvited } from '@chronicle/domain';
import { RecordedEvent } from '@chronicle/event-store';

/** Saga step for an AccountInvited event: issue the invitation's token and e-mail it, once. */
export class SendInvitationEmailCommand extends Command<void> {
  constructor(readonly invitation: RecordedEvent<AccountInvited['data']>) {
    super();
  }
}
