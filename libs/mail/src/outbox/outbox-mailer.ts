import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import { removeFileDurably, writeFileDurably } from '@chronicle/config';
import { AddressHash } from '@chronicle/domain';
import { Mailer, MailMessage } from '../mailer.port';
import { messageHeaders, parseSender, Sender } from '../message-headers';

/** RFC 5322 caps a line at 998 octets; longer text needs an encoding that folds it. */
const MAX_LINE_OCTETS = 998;

/**
 * The hex digits of a file's recipient tag: of its key's id, then of the keyed hash. 32 bits tell
 * the current key from another; 64 bits keep two recipients apart. Short, so that the name of a
 * message with the longest id (200 characters), and its temporary's, stay within 255 bytes.
 */
const KEY_ID_DIGITS = 8;
const HASH_DIGITS = 16;
const TAGGED_NAME = new RegExp(`^([0-9a-f]{${KEY_ID_DIGITS}})-[0-9a-f]{${HASH_DIGITS}}@`);

/**
 * Writes each message as `<recipient tag>@<id>.eml` in a directory (DATA_DIR/outbox when SMTP_URL
 * is unset). The file appears whole or not at all, and a resend of the same id replaces it. The
 * files hold reset links, so they are readable by the owner only.
 *
 * The tag is `<key id>-<keyed hash of the address>` (addressHasher, purpose `outbox-recipients`,
 * under the server secret): a person's messages are found by name, for their erasure, without
 * reading anyone else's; the listing names nobody, and without the secret a guessed address
 * cannot be checked against it (a plain hash could be). `@` is in no message id: a name without
 * one was written before files were tagged (`<id>.eml`).
 */
export class OutboxMailer extends Mailer {
  private readonly sender: Sender;
  private readonly keyId: string;

  constructor(
    readonly directory: string,
    mailFrom: string,
    private readonly recipients: AddressHash,
  ) {
    super();
    this.sender = parseSender(mailFrom);
    this.keyId = recipients.keyId.slice(0, KEY_ID_DIGITS);
  }

  /** What the names of the files to `address` begin with: its tag and `@`. */
  private tagOf(address: string): string {
    return `${this.keyId}-${this.recipients(address).slice(0, HASH_DIGITS)}@`;
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
    const file = join(this.directory, `${this.tagOf(message.to)}${message.id}.eml`);
    await writeFileDurably(file, eml, { hidden: true });
  }

  /**
   * Every .eml to `address` is deleted. Those tagged under the current key are known by their
   * names: no other recipient's file is read. Files of an older outbox are read to tell: named
   * `<id>.eml` (before files were tagged), or tagged under another key (the secret changed).
   */
  override async forget(address: string): Promise<number> {
    let names: string[];
    try {
      names = (await readdir(this.directory)).filter((name) => name.endsWith('.eml'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    const tag = this.tagOf(address);
    const wanted = address.trim().toLowerCase();
    let forgotten = 0;
    for (const name of names) {
      const file = join(this.directory, name);
      if (!name.startsWith(tag)) {
        if (TAGGED_NAME.exec(name)?.[1] === this.keyId) continue;
        const eml = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
          // Forgotten meanwhile by another forget of this recipient (an erasure and its saga).
          if (error.code === 'ENOENT') return null;
          throw error;
        });
        if (eml === null || recipientOf(eml) !== wanted) continue;
      }
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
