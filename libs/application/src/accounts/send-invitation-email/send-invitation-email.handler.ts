import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { accountDecider, accountStreamName } from '@chronicle/domain';
import { invitationEmail } from '@chronicle/mail';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { PasswordLinkMailer } from '../password-link-mailer';
import { SendInvitationEmailCommand } from './send-invitation-email.command';

/**
 * The invitation's link, mailed once (see PasswordLinkMailer) to the account's address. Its token
 * is bound to the account's first credentials: a password set by any means kills it, and it is
 * not sent at all once one has been.
 */
@CommandHandler(SendInvitationEmailCommand)
export class SendInvitationEmailHandler implements ICommandHandler<SendInvitationEmailCommand, void> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly links: PasswordLinkMailer,
  ) {}

  async execute({ invitation }: SendInvitationEmailCommand): Promise<void> {
    const { state } = await this.repository.load(
      accountDecider,
      accountStreamName(invitation.data.accountId),
    );
    const { invitedAt, expiresAt } = invitation.data;
    await this.links.send({
      event: invitation,
      account: state.exists && state.credentialsVersion === 0 ? state : null,
      credentialsVersion: 0,
      requestedAt: invitedAt,
      ttlSeconds: (Date.parse(expiresAt) - Date.parse(invitedAt)) / 1000,
      kind: 'invitation',
      content: invitationEmail,
    });
  }
}
