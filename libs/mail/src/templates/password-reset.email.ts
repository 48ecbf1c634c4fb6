import { escapeHtml } from './html-escape';
import { formatUtc, htmlDocument, MailContent } from './mail-content';

export interface PasswordResetEmailInput {
  to: string;
  /** PUBLIC_BASE_URL/reset-password?token=<token>; secret, never logged. */
  link: string;
  expiresAt: Date;
}

interface TokenLinkWording {
  template: string;
  subject: string;
  /** Why the e-mail was sent, given the address. */
  reason: (to: string) => string;
  open: string;
  linkLabel: string;
  notYou: string;
}

/**
 * An e-mail carrying a single-use password link (a reset, an invitation). The text part has the
 * link alone on its line, so it can be copied or extracted; every value is escaped in HTML.
 */
function tokenLinkEmail(
  wording: TokenLinkWording,
  { to, link, expiresAt }: PasswordResetEmailInput,
): MailContent {
  const reason = wording.reason(to);
  const expiry = `The link can be used once and expires at ${formatUtc(expiresAt)}.`;
  const text = [
    'Hello,',
    '',
    reason,
    wording.open,
    '',
    link,
    '',
    expiry,
    wording.notYou,
    '',
    'Chronicle',
    '',
  ].join('\n');
  const html = htmlDocument(
    wording.subject,
    [
      '<p>Hello,</p>',
      `<p>${escapeHtml(reason)}`,
      `${escapeHtml(wording.open)}</p>`,
      `<p><a href="${escapeHtml(link)}">${escapeHtml(wording.linkLabel)}</a></p>`,
      `<p>${escapeHtml(expiry)}`,
      `${escapeHtml(wording.notYou)}</p>`,
      '<p>Chronicle</p>',
    ].join('\n'),
  );
  return { template: wording.template, subject: wording.subject, text, html };
}

/** The reset e-mail. */
export const passwordResetEmail = (input: PasswordResetEmailInput): MailContent =>
  tokenLinkEmail(
    {
      template: 'password-reset',
      subject: 'Reset your Chronicle password',
      reason: (to) => `We received a request to reset the password of the Chronicle account ${to}.`,
      open: 'To choose a new password, open this link:',
      linkLabel: 'Reset your password',
      notYou:
        'If you did not request a password reset, you can ignore this e-mail: your password stays unchanged.',
    },
    input,
  );

/** An admin's invitation to an account opened without a password: its link sets the first one. */
export const invitationEmail = (input: PasswordResetEmailInput): MailContent =>
  tokenLinkEmail(
    {
      template: 'invitation',
      subject: 'Your Chronicle account',
      reason: (to) => `An administrator opened the Chronicle account ${to} for you.`,
      open: 'To choose your password, open this link:',
      linkLabel: 'Choose your password',
      notYou: 'If you did not expect this e-mail, you can ignore it: no one can sign in without a password.',
    },
    input,
  );
