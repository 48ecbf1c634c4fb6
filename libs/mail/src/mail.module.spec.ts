import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { ChronicleConfigModule, parseConfig } from '@chronicle/config';
import { MailModule } from './mail.module';
import { Mailer } from './mailer.port';
import { OutboxMailer } from './outbox/outbox-mailer';
import { SmtpMailer } from './smtp/smtp-mailer';

describe('MailModule', () => {
  const start = async (env: Record<string, string>) => {
    const config = parseConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'chronicle-mail-')), ...env });
    const moduleRef = await Test.createTestingModule({
      imports: [ChronicleConfigModule.forRoot(config), MailModule],
    }).compile();
    return { app: await moduleRef.init(), config };
  };

  it('writes to DATA_DIR/outbox when SMTP_URL is unset', async () => {
    const { app, config } = await start({});
    const mailer = app.get(Mailer);
    expect(mailer).toBeInstanceOf(OutboxMailer);
    expect((mailer as OutboxMailer).directory).toBe(join(config.dataDir, 'outbox'));
    await app.close();
  });

  it('sends over SMTP when SMTP_URL is set, and closes the transport on shutdown', async () => {
    const { app } = await start({ SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'ops@example.com' });
    const mailer = app.get(Mailer);
    expect(mailer).toBeInstanceOf(SmtpMailer);
    const shutdown = jest.spyOn(mailer as SmtpMailer, 'onApplicationShutdown');
    await app.close();
    expect(shutdown).toHaveBeenCalledTimes(1);
  });
});
