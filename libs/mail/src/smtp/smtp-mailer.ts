import { OnApplicationShutdown } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { Mailer, MailMessage } from '../mailer.port';
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
    await this.transport.sendMail({
      ...messageHeaders(message, this.sender),
      text: message.text,
      html: message.html,
    });
  }

  onApplicationShutdown(): void {
    this.transport.close();
  }
}
