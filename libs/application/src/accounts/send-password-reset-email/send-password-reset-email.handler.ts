import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import { passwordResetStreamName, resetRequestDecider } from '@chronicle/domain';
import { Mailer, passwordResetEmail } from '@chronicle/mail';
import { Clock } from '../../shared/clock';
import { followUpContext } from '../../shared/command-context';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { AccountDirectory } from '../account-directory';
import { resetTokenFor } from '../reset-token';
import { SendPasswordResetEmailCommand } from './send-password-reset-email.command';

/**
 * Issue the request's token (once: it is derived from the request id, and only its hash is
 * stored), send the e-mail, record that it went out. Run again after a crash it finds the request
 * mailed and does nothing; a crash between sending and recording re-sends the same token under
 * the same Message-ID. Nothing is sent when the address had no account at the request, or when
 * the request is older than the token's lifetime.
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
    const stream = passwordResetStreamName(request.id);
    const context = followUpContext(request);
    const { token, tokenHash } = resetTokenFor(request.id, this.config.tokenSecret);
    const account = await this.directory.findByEmailHashBefore(request.data.emailHash, request.position);
    const { state } = await this.repository.handle(
      resetRequestDecider,
      stream,
      (_state, now) => ({
        type: 'IssueResetToken' as const,
        requestId: request.id,
        accountId: account?.id ?? null,
        credentialsVersion: account?.credentialsVersion ?? 0,
        tokenHash,
        requestedAt: request.data.requestedAt,
        ttlSeconds: this.config.resetTokenTtlSeconds,
        now: now.toISOString(),
      }),
      context,
    );
    if (!state.exists || state.mailed || !account || account.id !== state.accountId) return;
    // A token that expired before it could be sent (the mail server was down) is not sent at all.
    const expiresAt = new Date(state.expiresAt);
    if (this.clock.now() >= expiresAt) return;
    const link = `${this.config.publicBaseUrl}/reset-password?token=${token}`;
    await this.mailer.send({
      id: `password-reset-${request.id}`,
      to: account.email,
      ...passwordResetEmail({ to: account.email, link, expiresAt }),
    });
    await this.repository.handle(
      resetRequestDecider,
      stream,
      (_state, now) => ({ type: 'RecordResetEmailSent' as const, now: now.toISOString() }),
      context,
    );
  }
}
