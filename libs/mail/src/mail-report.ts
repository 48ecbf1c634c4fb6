import { Logger } from '@nestjs/common';
import type { ChronicleMetrics } from '@chronicle/metrics';
import { errorMessage } from '@chronicle/config';
import { MailMessage, MailObserver } from './mailer.port';

/**
 * `j***@example.com`: enough for an operator to match a complaint to a line, not enough to
 * harvest addresses from the logs.
 */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1) return '***';
  return `${address[0]}***${address.slice(at)}`;
}

/**
 * One log line per e-mail, sent or failed, with its template and message id and a masked
 * address: never the body, which holds the reset link's token. Counted in the metrics too.
 */
export class MailReport implements MailObserver {
  private readonly logger = new Logger('Mail');

  constructor(private readonly metrics: ChronicleMetrics | null) {}

  sent(message: MailMessage): void {
    this.metrics?.mails.inc({ template: message.template ?? 'none', outcome: 'sent' });
    this.logger.log({ ...this.fields(message), outcome: 'sent' }, 'mail sent');
  }

  failed(message: MailMessage, error: unknown): void {
    this.metrics?.mails.inc({ template: message.template ?? 'none', outcome: 'failed' });
    this.logger.warn(
      {
        ...this.fields(message),
        outcome: 'failed',
        // An SMTP server's refusal often quotes the recipient: masked there too.
        error: errorMessage(error).split(message.to).join(maskAddress(message.to)),
      },
      'mail failed',
    );
  }

  private fields(message: MailMessage) {
    return { template: message.template ?? 'none', messageId: message.id, to: maskAddress(message.to) };
  }
}
