import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { accountDecider, accountStreamName } from '@chronicle/domain';
import { Mailer, passwordChangedEmail } from '@chronicle/mail';
import { SYSTEM_ACTOR } from '../../shared/command-context';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { CompletePasswordChangeCommand } from './complete-password-change.command';

/**
 * Records that the other reset tokens are void and the older access tokens revoked (the account's
 * state already enforces both from the change itself), then sends the notice, once per change.
 */
@CommandHandler(CompletePasswordChangeCommand)
export class CompletePasswordChangeHandler implements ICommandHandler<CompletePasswordChangeCommand, void> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly mailer: Mailer,
  ) {}

  async execute({ change }: CompletePasswordChangeCommand): Promise<void> {
    const changedAt = 'resetAt' in change.data ? change.data.resetAt : change.data.changedAt;
    const stream = accountStreamName(change.data.accountId);
    const context = {
      actor: SYSTEM_ACTOR,
      correlationId: change.metadata.correlationId,
      causationId: change.id,
    };
    const completed = await this.repository.handle(
      accountDecider,
      stream,
      () => ({ type: 'CompletePasswordChange' as const, changeId: change.id, changedAt }),
      context,
    );
    const account = completed.state;
    if (!account.exists || account.changesNotified.has(change.id)) return;
    await this.mailer.send({
      id: `password-changed-${change.id}`,
      to: account.email,
      ...passwordChangedEmail({ to: account.email, changedAt: new Date(changedAt) }),
    });
    await this.repository.handle(
      accountDecider,
      stream,
      (_state, now) => ({
        type: 'RecordPasswordChangeNotice' as const,
        changeId: change.id,
        now: now.toISOString(),
      }),
      context,
    );
  }
}
