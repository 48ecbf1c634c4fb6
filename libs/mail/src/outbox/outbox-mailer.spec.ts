import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { MailMessage } from '../mailer.port';
import { passwordResetEmail } from '../templates/password-reset.email';
import { OutboxMailer } from './outbox-mailer';

describe('OutboxMailer', () => {
  const from = 'Chronicle <no-reply@chronicle.example>';
  const link = `https://accounts.example.com/reset-password?token=${'a1B2_c3-'.repeat(12)}`;
  let directory: string;
  let mailer: OutboxMailer;

  const message = (overrides: Partial<MailMessage> = {}): MailMessage => ({
    to: 'ada@example.com',
    id: 'reset-0f6c2c1e.42',
    ...passwordResetEmail({ to: 'ada@example.com', link, expiresAt: new Date('2026-05-01T14:30:00Z') }),
    ...overrides,
  });
  const read = (id: string) => readFile(join(directory, `${id}.eml`));

  beforeEach(() => {
    directory = join(mkdtempSync(join(tmpdir(), 'chronicle-outbox-')), 'outbox');
    mailer = new OutboxMailer(directory, from);
  });

  it('writes an RFC 5322 message with both parts, named by its id and private to the owner', async () => {
    const sent = message();
    await mailer.send(sent);

    expect(await readdir(directory)).toEqual(['reset-0f6c2c1e.42.eml']);
    expect((await stat(join(directory, 'reset-0f6c2c1e.42.eml'))).mode & 0o077).toBe(0);
    const parsed = await simpleParser(await read(sent.id));
    expect(parsed.messageId).toBe('<reset-0f6c2c1e.42@chronicle.example>');
    expect(parsed.from?.text).toBe('"Chronicle" <no-reply@chronicle.example>');
    expect(parsed.to).toMatchObject({ text: 'ada@example.com' });
    expect(parsed.subject).toBe(sent.subject);
    expect(parsed.text).toBe(sent.text);
    expect(parsed.html).toBe(sent.html);
    expect(parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/alternative' });
  });

  it('keeps the link intact on its own line, so a shell one-liner can take the token out', async () => {
    await mailer.send(message());

    const token = execFileSync('sed', [
      '-n',
      's/^http.*[?&]token=\\([^[:space:]&]*\\).*$/\\1/p',
      join(directory, 'reset-0f6c2c1e.42.eml'),
    ]).toString();
    expect(token).toBe(`${'a1B2_c3-'.repeat(12)}\n`);
  });

  it('replaces the file when the same id is sent again, leaving no temporary file', async () => {
    await mailer.send(message({ subject: 'First attempt' }));
    await mailer.send(message({ subject: 'Second attempt' }));

    expect(await readdir(directory)).toEqual(['reset-0f6c2c1e.42.eml']);
    expect((await simpleParser(await read('reset-0f6c2c1e.42'))).subject).toBe('Second attempt');
  });

  it('never shows a reader a partly written file', async () => {
    const id = 'large';
    const html = `<p>${'x'.repeat(2_000_000)}</p>`;
    let writing = true;
    const sends = (async () => {
      for (let attempt = 0; attempt < 10; attempt += 1) await mailer.send(message({ id, html }));
      writing = false;
    })();

    const sizes = new Set<number>();
    while (writing) {
      const content = await read(id).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      if (content) sizes.add(content.length);
    }
    await sends;
    const complete = (await read(id)).length;
    expect([...sizes].every((size) => Math.abs(size - complete) < 200)).toBe(true);
  });

  it('keeps non-ASCII text and over-long lines readable after parsing', async () => {
    const text = `Grüße, Zoë\n${'y'.repeat(1_200)}\n`;
    await mailer.send(message({ id: 'unicode', text, subject: 'Grüße' }));

    const parsed = await simpleParser(await read('unicode'));
    expect(parsed.subject).toBe('Grüße');
    expect(parsed.text).toBe(text);
  });

  it.each(['../escape', 'a/b', '.hidden', 'two..dots', 'trailing.', 'white space', '', 'x'.repeat(201)])(
    'rejects the id %p and writes nothing',
    async (id) => {
      await expect(mailer.send(message({ id }))).rejects.toThrow('Invalid mail id');
      await expect(readdir(directory)).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it('refuses a MAIL_FROM without one address and domain', () => {
    expect(() => new OutboxMailer(directory, 'Chronicle')).toThrow('MAIL_FROM');
    expect(() => new OutboxMailer(directory, 'a@b.example, c@d.example')).toThrow('MAIL_FROM');
  });
});
