import { createConnection } from 'node:net';
import { MailMessage, MailRejectedError, SmtpMailer } from '@chronicle/mail';
import { SmtpCatcher, startSmtpCatcher } from '../support/smtp-catcher';

describe('SMTP catcher', () => {
  let catcher: SmtpCatcher;
  let mailer: SmtpMailer;

  const message = (id: string, to = 'ada@example.com'): MailMessage => ({
    id,
    to,
    subject: `Message ${id}`,
    text: `Text of ${id}\n`,
    html: `<p>HTML of ${id}</p>\n`,
  });

  beforeEach(async () => {
    catcher = await startSmtpCatcher();
    mailer = new SmtpMailer(catcher.url, 'no-reply@chronicle.example');
  });

  afterEach(async () => {
    mailer.onApplicationShutdown();
    await catcher.stop();
  });

  it('listens on loopback', () => {
    expect(catcher.url).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
  });

  it('resolves waitFor with a message that arrives later, skipping those that do not match', async () => {
    const waiting = catcher.waitFor((mail) => mail.subject === 'Message second');
    await mailer.send(message('first'));
    await mailer.send(message('second', 'bob@example.com'));

    const received = await waiting;
    expect(received.to).toMatchObject({ text: 'bob@example.com' });
    expect(catcher.messages.map((mail) => mail.subject)).toEqual(['Message first', 'Message second']);
  });

  it('resolves waitFor at once with a message already received', async () => {
    await mailer.send(message('early'));
    await expect(catcher.waitFor((mail) => mail.subject === 'Message early', 10)).resolves.toMatchObject({
      text: 'Text of early\n',
    });
  });

  it('rejects waitFor when nothing matches in time', async () => {
    await mailer.send(message('other'));
    await expect(catcher.waitFor((mail) => mail.subject === 'never', 50)).rejects.toThrow(
      'No matching e-mail within 50 ms (1 received)',
    );
  });

  it('rejects waitFor when the predicate throws', async () => {
    const rejection = expect(
      catcher.waitFor(() => {
        throw new Error('bad predicate');
      }),
    ).rejects.toThrow('bad predicate');
    await mailer.send(message('any'));
    await rejection;
  });

  it('refuses exactly the next n messages with a transient error', async () => {
    catcher.failNext(2);
    await expect(mailer.send(message('a'))).rejects.toMatchObject({ responseCode: 451 });
    await expect(mailer.send(message('a'))).rejects.toMatchObject({ responseCode: 451 });
    await mailer.send(message('a'));

    expect(catcher.messages).toHaveLength(1);
  });

  it('refuses a bouncing recipient for good: the mailer says it is permanent, and others still get through', async () => {
    catcher.rejectRecipient('Bounce@Example.com');
    const refused = mailer.send(message('b', 'bounce@example.com'));
    await expect(refused).rejects.toBeInstanceOf(MailRejectedError);
    await expect(refused).rejects.toMatchObject({ responseCode: 550 });
    await mailer.send(message('c', 'carol@example.com'));

    expect(catcher.messages.map((mail) => mail.subject)).toEqual(['Message c']);
  });

  it('keeps held messages without answering them: the sender waits', async () => {
    catcher.holdReplies();
    let settled = false;
    // It fails once the catcher stops after the test and drops the connection.
    void mailer
      .send(message('held'))
      .catch(() => undefined)
      .finally(() => (settled = true));
    await catcher.waitFor((mail) => mail.subject === 'Message held');
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(settled).toBe(false);
  });

  it('stops listening', async () => {
    const port = Number(new URL(catcher.url).port);
    await mailer.send(message('before-stop'));
    mailer.onApplicationShutdown();
    await catcher.stop();

    await expect(
      new Promise((resolve, reject) =>
        createConnection(port, '127.0.0.1').on('connect', resolve).on('error', reject),
      ),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    catcher = await startSmtpCatcher();
  });
});
