import { Module } from '@nestjs/common';
import { join } from 'node:path';
import { ChronicleConfig } from '@chronicle/config';
import { addressHasher } from '@chronicle/domain';
import { ChronicleMetrics } from '@chronicle/metrics';
import { MailReport } from './mail-report';
import { Mailer } from './mailer.port';
import { OutboxMailer } from './outbox/outbox-mailer';
import { SmtpMailer } from './smtp/smtp-mailer';

/** Where e-mails are written, in DATA_DIR, when SMTP_URL is unset. */
export const OUTBOX_DIR = 'outbox';

/** SMTP when SMTP_URL is set, else .eml files in DATA_DIR/outbox; each send logged and counted. */
export function createMailer(config: ChronicleConfig, metrics: ChronicleMetrics | null = null): Mailer {
  const mailer = config.smtpUrl
    ? new SmtpMailer(config.smtpUrl, config.mailFrom)
    : new OutboxMailer(
        join(config.dataDir, OUTBOX_DIR),
        config.mailFrom,
        addressHasher(config.tokenSecret, 'outbox-recipients'),
      );
  return mailer.observe(new MailReport(metrics));
}

/**
 * Provides the Mailer port; needs ChronicleConfig, which the host app provides globally, and
 * counts in the process's ChronicleMetrics when there is one (the CLI has none).
 */
@Module({
  providers: [
    {
      provide: Mailer,
      useFactory: (config: ChronicleConfig, metrics?: ChronicleMetrics) =>
        createMailer(config, metrics ?? null),
      inject: [ChronicleConfig, { token: ChronicleMetrics, optional: true }],
    },
  ],
  exports: [Mailer],
})
export class MailModule {}
