import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { accountDecider, accountStreamName } from '@chronicle/domain';
import { Mailer, passwordResetEmail } from '@chronicle/mail';
import { Clock } from '../../shared/clock';
import { SYSTEM_ACTOR } from '../../shared/command-context';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { AccountDirectory } from '../account-directory';
import { newResetToken } from '../reset-token';
import { SendPasswordResetEmailCommand } from './send-password-reset-email.command';

/**
 * Issue the token (only its hash is stored), send the e-mail, record that it went out. Run again
 * after a crash, it finds the request already mailed and does nothing; a crash between sending and
 * recording sends a fresh token under the same Message-ID, so the outbox keeps one e-mail.
 */
@CommandHandler(SendPasswordResetEmailCommand)
export class SendPasswordResetEmailHandler implements ICommandHandler<SendPasswordResetEmailCommand, void> {
  constructor(
    private readonly directory: AccountDirectory,
    private readonly repository: EventSourcedRepository,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
    private readonly config: ChronicleConfig,
  ) {}

  async execute({ request }: SendPasswordResetEmailCommand): Promise<void> {
    const account = await this.directory.findByEmailHash(request.data.emailHash);
    if (!account || account.resetRequestsMailed.has(request.id)) return;
    const stream = accountStreamName(account.id);
    const context = {
      actor: SYSTEM_ACTOR,
      correlationId: request.metadata.correlationId,
      causationId: request.id,
    };
    const { token, tokenId, tokenHash } = newResetToken(account.id);
    let expiresAt = new Date(0);
    await this.repository.handle(
      accountDecider,
      stream,
      (_state, now) => {
        expiresAt = new Date(now.getTime() + this.config.resetTokenTtlSeconds * 1000);
        return {
          type: 'IssueResetToken' as const,
          requestId: request.id,
          tokenId,
          tokenHash,
          now: now.toISOString(),
          expiresAt: expiresAt.toISOString(),
        };
      },
      context,
    );
    const link = `${this.config.publicBaseUrl}/reset-password?token=${token}`;
    await this.mailer.send({
      id: `password-reset-${request.id}`,
      to: account.email,
      ...passwordResetEmail({ to: account.email, link, expiresAt }),
    });
    await this.repository.handle(
      accountDecider,
      stream,
      (_state, now) => ({
        type: 'RecordResetEmailSent' as const,
        requestId: request.id,
        tokenId,
        now: now.toISOString(),
      }),
      context,
    );
  }
}
