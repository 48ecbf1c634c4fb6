import addressparser from 'nodemailer/lib/addressparser';
import { MailMessage } from './mailer.port';

/** A dot-atom (RFC 5322) that is also a safe file name: no slash, no leading dot, no `..`. */
const MAIL_ID = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
const MAX_MAIL_ID_LENGTH = 200;

/** The sender from MAIL_FROM: the header value as configured, and the domain its Message-IDs use. */
export interface Sender {
  from: string;
  domain: string;
}

export function parseSender(mailFrom: string): Sender {
  const addresses = addressparser(mailFrom);
  const mailbox = addresses.length === 1 ? addresses[0].address : undefined;
  const domain = /^[^@\s]+@([^@\s]+)$/.exec(mailbox ?? '')?.[1];
  if (!domain) throw new Error(`MAIL_FROM must hold exactly one address with a domain, got "${mailFrom}"`);
  return { from: mailFrom, domain };
}

/** The headers both adapters write, with a Message-ID that is the same for every send of one id. */
export function messageHeaders(message: MailMessage, sender: Sender) {
  if (message.id.length > MAX_MAIL_ID_LENGTH || !MAIL_ID.test(message.id)) {
    throw new Error(`Invalid mail id "${message.id}": expected dot-separated letters, digits, _ and -`);
  }
  return {
    from: sender.from,
    to: message.to,
    subject: message.subject,
    messageId: `<${message.id}@${sender.domain}>`,
  };
}
