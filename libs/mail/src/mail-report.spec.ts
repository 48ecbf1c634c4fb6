import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { addressHasher } from '@chronicle/domain';
import { ChronicleMetrics } from '@chronicle/metrics';
import { maskAddress, MailReport } from './mail-report';
import { OutboxMailer } from './outbox/outbox-mailer';
import { passwordResetEmail } from './templates/password-reset.email';

describe('MailReport', () => {
  const secretLink = 'https://chronicle.example/reset-password?token=s3cr3t-token-value';

  const setUp = () => {
    const metrics = new ChronicleMetrics();
    const mailer = new OutboxMailer(
      mkdtempSync(join(tmpdir(), 'chronicle-mail-report-')),
      'ops@example.com',
      addressHasher(Buffer.alloc(32, 7), 'outbox-recipients'),
    );
    mailer.observe(new MailReport(metrics));
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const count = async (outcome: string) =>
      (await metrics.mails.get()).values.find(
        (value) => value.labels.outcome === outcome && value.labels.template === 'password-reset',
      )?.value ?? 0;
    return { mailer, log, warn, count };
  };
  const message = (id: string) => ({
    id,
    to: 'jane.doe@example.com',
    ...passwordResetEmail({ to: 'jane.doe@example.com', link: secretLink, expiresAt: new Date() }),
  });

  afterEach(() => jest.restoreAllMocks());

  it('logs a sent e-mail by template and message id, the address masked, never the link', async () => {
    const { mailer, log, count } = setUp();
    await mailer.send(message('password-reset-1'));
    expect(log).toHaveBeenCalledWith(
      { template: 'password-reset', messageId: 'password-reset-1', to: 'j***@example.com', outcome: 'sent' },
      'mail sent',
    );
    expect(JSON.stringify(log.mock.calls)).not.toMatch(/s3cr3t|jane\.doe/);
    expect(await count('sent')).toBe(1);
  });

  it('logs and counts a failed send, and still rejects so the caller retries', async () => {
    const { mailer, warn, count } = setUp();
    await expect(mailer.send(message('not a valid id'))).rejects.toThrow('Invalid mail id');
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ template: 'password-reset', outcome: 'failed', to: 'j***@example.com' }),
      'mail failed',
    );
    expect(JSON.stringify(warn.mock.calls)).not.toMatch(/s3cr3t|jane\.doe/);
    expect(await count('failed')).toBe(1);
    expect(await count('sent')).toBe(0);
  });

  it.each([
    ['jane@example.com', 'j***@example.com'],
    ['a@b.c', 'a***@b.c'],
    ['@example.com', '***'],
    ['no-at-sign', '***'],
  ])('masks %s as %s', (address, masked) => {
    expect(maskAddress(address)).toBe(masked);
  });
});
