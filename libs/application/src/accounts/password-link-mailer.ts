import { Injectable } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { Account, passwordResetStreamName, resetRequestDecider } from '@chronicle/domain';
import { RecordedEvent } from '@chronicle/event-store';
import { MailContent, Mailer, PasswordResetEmailInput } from '@chronicle/mail';
import { Clock } from '../shared/clock';
import { followUpContext } from '../shared/command-context';
import { EventSourcedRepository } from '../shared/event-sourced-repository';
import { resetTokenFor } from './reset-token';

export interface PasswordLinkRequest {
  /** The event that asks for the link: its id names the request (token, stream and Message-ID). */
  event: RecordedEvent;
  /** The account the link is for; null when there is none (nothing is sent). */
  account: Pick<Account, 'id' | 'email'> | null;
  /** The account's credentials version the token is bound to: it dies when the version moves on. */
  credentialsVersion: number;
  requestedAt: string;
  /** The link works this long after `requestedAt`. */
  ttlSeconds: number;
  /** The e-mail's kind: its Message-ID is `<kind>-<event id>`. */
  kind: string;
  content: (input: PasswordResetEmailInput) => MailContent;
}

/**
 * A single-use password link by e-mail (a reset, an invitation), once per request: the token is
 * issued once (derived from the request's id, only its hash stored, in `passwordreset-<id>`), the
 * e-mail sent, and its sending recorded. Run again after a crash it finds the request mailed and
 * does nothing; a crash between sending and recording re-sends the same token under the same
 * Message-ID. Nothing is sent for no account, or once the request is older than the link's lifetime.
 * The link is completed by PUT /api/v1/account/password {token, new}, for that account only.
 */
@Injectable()
export class PasswordLinkMailer {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
    private readonly config: ChronicleConfig,
  ) {}

  async send(request: PasswordLinkRequest): Promise<void> {
    const { event, account } = request;
    const stream = passwordResetStreamName(event.id);
    const context = followUpContext(event);
    const { token, tokenHash } = resetTokenFor(event.id, this.config.tokenSecret);
    const { state } = await this.repository.handle(
      resetRequestDecider,
      stream,
      (_state, now) => ({
        type: 'IssueResetToken' as const,
        requestId: event.id,
        accountId: account?.id ?? null,
        credentialsVersion: request.credentialsVersion,
        tokenHash,
        requestedAt: request.requestedAt,
        ttlSeconds: request.ttlSeconds,
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
      id: `${request.kind}-${event.id}`,
      to: account.email,
      ...request.content({ to: account.email, link, expiresAt }),
    });
    await this.repository.handle(
      resetRequestDecider,
      stream,
      (_state, now) => ({ type: 'RecordResetEmailSent' as const, now: now.toISOString() }),
      context,
    );
  }
}
