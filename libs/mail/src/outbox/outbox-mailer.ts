import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import { removeFileDurably, writeFileDurably } from '@chronicle/config';
import { Mailer, MailMessage } from '../mailer.port';
import { messageHeaders, parseSender, Sender } from '../message-headers';

/** RFC 5322 caps a line at 998 octets; longer text needs an encoding that folds it. */
const MAX_LINE_OCTETS = 998;

/**
 * Writes each message as `<id>.eml` in a directory (DATA_DIR/outbox when SMTP_URL is unset). The
 * file appears whole or not at all, and a resend of the same id replaces it. The files hold reset
 * links, so they are readable by the owner only.
 */
export class OutboxMailer extends Mailer {
  private readonly sender: Sender;

  constructor(
    readonly directory: string,
    mailFrom: string,
  ) {
    super();
    this.sender = parseSender(mailFrom);
  }

  protected override async deliver(message: MailMessage): Promise<void> {
    const headers = messageHeaders(message, this.sender);
    const eml = await new MailComposer({
      ...headers,
      text: verbatimTextPart(message.text) ?? message.text,
      html: message.html,
      // A file has no SMTP layer to normalise line ends: write RFC 5322's CRLF throughout.
      newline: 'windows',
    })
      .compile()
      .build();

    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    // A dot file while written: readers that list *.eml, and backups, never pick up a partial write.
    // Durable once this resolves: the caller then records "sent".
    await writeFileDurably(join(this.directory, `${message.id}.eml`), eml, { hidden: true });
  }

  /** Every .eml to `address` is deleted: reading each file's headers, as the outbox keeps no index. */
  override async forget(address: string): Promise<number> {
    let names: string[];
    try {
      names = (await readdir(this.directory)).filter((name) => name.endsWith('.eml'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    const wanted = address.trim().toLowerCase();
    let forgotten = 0;
    for (const name of names) {
      const file = join(this.directory, name);
      if (recipientOf(await readFile(file, 'utf8')) !== wanted) continue;
      await removeFileDurably(file);
      forgotten += 1;
    }
    return forgotten;
  }
}

/** The address of a message's `To:` header, as written by messageHeaders (one recipient). */
function recipientOf(eml: string): string | null {
  const header = /^To: *(?:.*<)?([^<>\r\n]+?)>? *\r?$/im.exec(eml.slice(0, eml.search(/\r?\n\r?\n/)));
  return header === null ? null : header[1].trim().toLowerCase();
}

/**
 * Keeps the text part unencoded when its lines fit RFC 5322's 998 octets, so the reset link stays on
 * one line, readable and greppable in the .eml. nodemailer would quoted-print any line over 76
 * characters and ignores a requested 7bit/8bit, hence a pre-built part.
 */
function verbatimTextPart(text: string): { raw: string } | undefined {
  if (text.split(/\r?\n/).some((line) => Buffer.byteLength(line) > MAX_LINE_OCTETS)) return undefined;
  const encoding = /^\p{ASCII}*$/u.test(text) ? '7bit' : '8bit';
  return {
    raw: ['Content-Type: text/plain; charset=utf-8', `Content-Transfer-Encoding: ${encoding}`, '', text].join(
      '\r\n',
    ),
  };
}
