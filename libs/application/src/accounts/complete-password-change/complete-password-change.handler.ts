import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { passwordChangeDecider, passwordChangeStreamName } from '@chronicle/domain';
import { Mailer, passwordChangedEmail } from '@chronicle/mail';
import { followUpContext } from '../../shared/command-context';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { AccountDirectory } from '../account-directory';
import { CompletePasswordChangeCommand } from './complete-password-change.command';

/**
 * Records that the older access tokens are revoked (the account already enforces it from the
 * change itself, and so do the reset tokens' credentials version), then sends the notice, once per
 * change: both are kept in the change's own stream, never on the account.
 */
@CommandHandler(CompletePasswordChangeCommand)
export class CompletePasswordChangeHandler implements ICommandHandler<CompletePasswordChangeCommand, void> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly directory: AccountDirectory,
    private readonly mailer: Mailer,
  ) {}

  async execute({ change }: CompletePasswordChangeCommand): Promise<void> {
    const changedAt = 'resetAt' in change.data ? change.data.resetAt : change.data.changedAt;
    const { accountId } = change.data;
    const stream = passwordChangeStreamName(change.id);
    const context = followUpContext(change);
    const completed = await this.repository.handle(
      passwordChangeDecider,
      stream,
      () => ({ type: 'RevokeAccessTokensBefore' as const, accountId, changeId: change.id, changedAt }),
      context,
    );
    if (completed.state.exists && completed.state.notified) return;
    const account = await this.directory.findById(accountId);
    if (!account) return;
    await this.mailer.send({
      id: `password-changed-${change.id}`,
      to: account.email,
      ...passwordChangedEmail({ to: account.email, changedAt: new Date(changedAt) }),
    });
    await this.repository.handle(
      passwordChangeDecider,
      stream,
      (_state, now) => ({
        type: 'RecordPasswordChangeNotice' as const,
        accountId,
        changeId: change.id,
        now: now.toISOString(),
      }),
      context,
    );
  }
}
