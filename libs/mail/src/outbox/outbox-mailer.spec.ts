import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import fs from 'node:fs/promises';
import { readdir, readFile, rename, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { addressHasher } from '@chronicle/domain';
import { MailMessage } from '../mailer.port';
import { passwordResetEmail } from '../templates/password-reset.email';
import { OutboxMailer } from './outbox-mailer';

describe('OutboxMailer', () => {
  const from = 'Chronicle <no-reply@chronicle.example>';
  const link = `https://accounts.example.com/reset-password?token=${'a1B2_c3-'.repeat(12)}`;
  const recipients = addressHasher(Buffer.alloc(32, 7), 'outbox-recipients');
  /** A message's file: its recipient's tag (key id, keyed hash of the address), `@`, its id. */
  const nameOf = (id: string, to = 'ada@example.com') =>
    `${recipients.keyId.slice(0, 8)}-${recipients(to).slice(0, 16)}@${id}.eml`;
  let directory: string;
  let mailer: OutboxMailer;

  const message = (overrides: Partial<MailMessage> = {}): MailMessage => ({
    to: 'ada@example.com',
    id: 'reset-0f6c2c1e.42',
    ...passwordResetEmail({ to: 'ada@example.com', link, expiresAt: new Date('2026-05-01T14:30:00Z') }),
    ...overrides,
  });
  const read = (id: string) => readFile(join(directory, nameOf(id)));

  beforeEach(() => {
    directory = join(mkdtempSync(join(tmpdir(), 'chronicle-outbox-')), 'outbox');
    mailer = new OutboxMailer(directory, from, recipients);
  });

  it('writes an RFC 5322 message with both parts, named by its id and private to the owner', async () => {
    const sent = message();
    await mailer.send(sent);

    expect(await readdir(directory)).toEqual([nameOf('reset-0f6c2c1e.42')]);
    expect((await stat(join(directory, nameOf('reset-0f6c2c1e.42')))).mode & 0o077).toBe(0);
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
      join(directory, nameOf('reset-0f6c2c1e.42')),
    ]).toString();
    expect(token).toBe(`${'a1B2_c3-'.repeat(12)}\n`);
  });

  it('replaces the file when the same id is sent again, leaving no temporary file', async () => {
    await mailer.send(message({ subject: 'First attempt' }));
    await mailer.send(message({ subject: 'Second attempt' }));

    expect(await readdir(directory)).toEqual([nameOf('reset-0f6c2c1e.42')]);
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
    expect(() => new OutboxMailer(directory, 'Chronicle', recipients)).toThrow('MAIL_FROM');
    expect(() => new OutboxMailer(directory, 'a@b.example, c@d.example', recipients)).toThrow('MAIL_FROM');
  });

  it('keeps the name of a message with the longest id, and of its temporary, within 255 bytes', async () => {
    const id = 'x'.repeat(200);
    await mailer.send(message({ id }));

    expect(await readdir(directory)).toEqual([nameOf(id)]);
    // `.<name>.<pid>.<8 hex>.tmp` while written, with a pid of up to 7 digits.
    expect(Buffer.byteLength(`.${nameOf(id)}.4194304.01234567.tmp`)).toBeLessThanOrEqual(255);
  });

  describe('forget', () => {
    const to = (address: string, id: string) => message({ to: address, id });

    /** Renamed as the previous release named its files, `<id>.eml`: the content is as it wrote it. */
    async function asPreviousRelease(id: string, address: string): Promise<string> {
      await mailer.send(to(address, id));
      await rename(join(directory, nameOf(id, address)), join(directory, `${id}.eml`));
      return `${id}.eml`;
    }

    it("deletes a recipient's messages found by their names, reading no file", async () => {
      await mailer.send(to('ada@example.com', 'reset-1'));
      await mailer.send(to('ada@example.com', 'notice-2'));
      await mailer.send(to('bob@example.com', 'reset-3'));
      const reads = jest.spyOn(fs, 'readFile');

      expect(await mailer.forget(' Ada@Example.COM ')).toBe(2);

      expect(await readdir(directory)).toEqual([nameOf('reset-3', 'bob@example.com')]);
      expect(reads).not.toHaveBeenCalled();
      reads.mockRestore();
    });

    it('finds the files of an outbox the previous release wrote, reading only those', async () => {
      await mailer.send(to('ada@example.com', 'reset-1'));
      await mailer.send(to('bob@example.com', 'reset-2'));
      const adaBefore = await asPreviousRelease('reset-0', 'ada@example.com');
      const bobBefore = await asPreviousRelease('reset-00', 'bob@example.com');
      const reads = jest.spyOn(fs, 'readFile');

      expect(await mailer.forget('ada@example.com')).toBe(2);

      expect((await readdir(directory)).sort()).toEqual(
        [bobBefore, nameOf('reset-2', 'bob@example.com')].sort(),
      );
      expect(reads.mock.calls.map(([file]) => file).sort()).toEqual(
        [join(directory, adaBefore), join(directory, bobBefore)].sort(),
      );
      reads.mockRestore();
    });

    it('finds the files named under another secret by reading them', async () => {
      const before = new OutboxMailer(
        directory,
        from,
        addressHasher(Buffer.alloc(32, 8), 'outbox-recipients'),
      );
      await before.send(to('ada@example.com', 'reset-1'));
      await before.send(to('bob@example.com', 'reset-2'));
      await mailer.send(to('bob@example.com', 'reset-3'));

      expect(await mailer.forget('ada@example.com')).toBe(1);

      expect(await readdir(directory)).toHaveLength(2);
      const left = await Promise.all(
        (await readdir(directory)).map((name) => readFile(join(directory, name))),
      );
      expect(left.every((eml) => eml.includes('To: bob@example.com'))).toBe(true);
    });

    it('forgets alongside another forget of the same recipient (the erasure and its saga), neither failing', async () => {
      for (let i = 0; i < 20; i++) {
        await mailer.send(to('ada@example.com', `reset-${i}`));
        await asPreviousRelease(`old-${i}`, 'ada@example.com');
      }
      await mailer.send(to('bob@example.com', 'reset-b'));

      const counts = await Promise.all([mailer.forget('ada@example.com'), mailer.forget('ada@example.com')]);

      expect(counts.every((count) => count <= 40)).toBe(true);
      expect(await readdir(directory)).toEqual([nameOf('reset-b', 'bob@example.com')]);
    });

    it('forgets nothing in an outbox never written', async () => {
      expect(await mailer.forget('ada@example.com')).toBe(0);
    });
  });
});
