import { OnApplicationShutdown } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { Mailer, MailMessage, MailRejectedError } from '../mailer.port';
import { messageHeaders, parseSender, Sender } from '../message-headers';

/**
 * Delivers over SMTP with a connection pool. Failures reject and are not retried here: the caller
 * retries with back-off, and the stable Message-ID lets the receiving side spot a duplicate.
 */
export class SmtpMailer extends Mailer implements OnApplicationShutdown {
  private readonly sender: Sender;
  private readonly transport: Transporter;

  /** Options in SMTP_URL's query (e.g. `?pool=false&socketTimeout=60000`) override these defaults. */
  constructor(smtpUrl: string, mailFrom: string) {
    super();
    this.sender = parseSender(mailFrom);
    this.transport = createTransport({
      url: smtpUrl,
      pool: true,
      // nodemailer waits minutes by default; a hung server should fail the send so the caller retries.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }

  protected override async deliver(message: MailMessage): Promise<void> {
    try {
      await this.transport.sendMail({
        ...messageHeaders(message, this.sender),
        text: message.text,
        html: message.html,
      });
    } catch (error) {
      // 5xx is permanent (RFC 5321 4.2.1); 4xx and lost connections are worth another try.
      const { responseCode, response } = error as { responseCode?: unknown; response?: unknown };
      if (typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600) {
        throw new MailRejectedError(
          responseCode,
          typeof response === 'string' ? response : String(responseCode),
        );
      }
      throw error;
    }
  }

  onApplicationShutdown(): void {
    this.transport.close();
  }
}
