import { Module } from '@nestjs/common';
import { join } from 'node:path';
import { ChronicleConfig } from '@chronicle/config';
import { Mailer } from './mailer.port';
import { OutboxMailer } from './outbox/outbox-mailer';
import { SmtpMailer } from './smtp/smtp-mailer';

/** SMTP when SMTP_URL is set, else .eml files in DATA_DIR/outbox. */
export function createMailer(config: ChronicleConfig): Mailer {
  return config.smtpUrl
    ? new SmtpMailer(config.smtpUrl, config.mailFrom)
    : new OutboxMailer(join(config.dataDir, 'outbox'), config.mailFrom);
}

/** Provides the Mailer port; needs ChronicleConfig, which the host app provides globally. */
@Module({
  providers: [{ provide: Mailer, useFactory: createMailer, inject: [ChronicleConfig] }],
  exports: [Mailer],
})
export class MailModule {}
