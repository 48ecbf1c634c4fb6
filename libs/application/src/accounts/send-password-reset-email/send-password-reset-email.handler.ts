import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { passwordResetEmail } from '@chronicle/mail';
import { AccountDirectory } from '../account-directory';
import { PasswordLinkMailer } from '../password-link-mailer';
import { SendPasswordResetEmailCommand } from './send-password-reset-email.command';

/**
 * The reset link of a request, mailed once (see PasswordLinkMailer) to the account that had the
 * address when the request was made: none at all when no account had it.
 */
@CommandHandler(SendPasswordResetEmailCommand)
export class SendPasswordResetEmailHandler implements ICommandHandler<SendPasswordResetEmailCommand, void> {
  constructor(
    private readonly directory: AccountDirectory,
    private readonly links: PasswordLinkMailer,
    private readonly config: ChronicleConfig,
  ) {}

  async execute({ request }: SendPasswordResetEmailCommand): Promise<void> {
    const account = await this.directory.findByReservationBefore(request.data.reservation, request.position);
    await this.links.send({
      event: request,
      account,
      credentialsVersion: account?.credentialsVersion ?? 0,
      requestedAt: request.data.requestedAt,
      ttlSeconds: this.config.resetTokenTtlSeconds,
      kind: 'password-reset',
      content: passwordResetEmail,
    });
  }
}
