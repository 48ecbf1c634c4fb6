import { createServer } from 'node:net';
import { SmtpCatcher, startSmtpCatcher } from '../../../../test/support/smtp-catcher';
import { MailMessage } from '../mailer.port';
import { SmtpMailer } from './smtp-mailer';

describe('SmtpMailer', () => {
  let catcher: SmtpCatcher;
  let mailer: SmtpMailer;

  const message = (overrides: Partial<MailMessage> = {}): MailMessage => ({
    id: 'notice-7d1e.1',
    to: 'ada@example.com',
    subject: 'Your Chronicle password was changed',
    text: 'Plain words, ünïcode and a long line: ' + 'x'.repeat(120) + '\n',
    html: '<p>Rich <b>words</b></p>\n',
    ...overrides,
  });

  beforeEach(async () => {
    catcher = await startSmtpCatcher();
    mailer = new SmtpMailer(catcher.url, 'Chronicle <no-reply@chronicle.example>');
  });

  afterEach(async () => {
    mailer.onApplicationShutdown();
    await catcher.stop();
  });

  it('delivers both parts with the headers and a Message-ID derived from the id', async () => {
    const sent = message();
    await mailer.send(sent);

    const received = await catcher.waitFor((mail) => mail.messageId === '<notice-7d1e.1@chronicle.example>');
    expect(received.from?.text).toBe('"Chronicle" <no-reply@chronicle.example>');
    expect(received.to).toMatchObject({ text: 'ada@example.com' });
    expect(received.subject).toBe(sent.subject);
    expect(received.text).toBe(sent.text);
    expect(received.html).toBe(sent.html);
    expect(received.headers.get('content-type')).toMatchObject({ value: 'multipart/alternative' });
  });

  it('gives every send of one id the same Message-ID', async () => {
    await mailer.send(message());
    await mailer.send(message());

    expect(catcher.messages.map((mail) => mail.messageId)).toEqual([
      '<notice-7d1e.1@chronicle.example>',
      '<notice-7d1e.1@chronicle.example>',
    ]);
  });

  it('rejects when the server refuses the message, and delivers when sent again', async () => {
    catcher.failNext(1);
    await expect(mailer.send(message())).rejects.toMatchObject({ responseCode: 451 });
    expect(catcher.messages).toHaveLength(0);

    await mailer.send(message());
    expect(catcher.messages).toHaveLength(1);
  });

  it('rejects when no server listens', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const unreachable = new SmtpMailer(`smtp://127.0.0.1:${port}`, 'no-reply@chronicle.example');
    try {
      await expect(unreachable.send(message())).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      unreachable.onApplicationShutdown();
    }
  });

  it('rejects an invalid id before connecting', async () => {
    await expect(mailer.send(message({ id: '../x' }))).rejects.toThrow('Invalid mail id');
    expect(catcher.messages).toHaveLength(0);
  });
});
