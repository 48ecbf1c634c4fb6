import { escapeHtml } from './html-escape';
import { formatUtc, htmlDocument, MailContent } from './mail-content';

export interface PasswordResetEmailInput {
  to: string;
  /** PUBLIC_BASE_URL/reset-password?token=<token>; secret, never logged. */
  link: string;
  expiresAt: Date;
}

/** The reset e-mail. The text part has the link alone on its line, so it can be copied or extracted. */
export function passwordResetEmail({ to, link, expiresAt }: PasswordResetEmailInput): MailContent {
  const subject = 'Reset your Chronicle password';
  const requested = `We received a request to reset the password of the Chronicle account ${to}.`;
  const open = 'To choose a new password, open this link:';
  const expiry = `The link can be used once and expires at ${formatUtc(expiresAt)}.`;
  const notYou =
    'If you did not request a password reset, you can ignore this e-mail: your password stays unchanged.';
  const text = ['Hello,', '', requested, open, '', link, '', expiry, notYou, '', 'Chronicle', ''].join('\n');
  const html = htmlDocument(
    subject,
    [
      '<p>Hello,</p>',
      `<p>${escapeHtml(requested)}`,
      `${escapeHtml(open)}</p>`,
      `<p><a href="${escapeHtml(link)}">Reset your password</a></p>`,
      `<p>${escapeHtml(expiry)}`,
      `${escapeHtml(notYou)}</p>`,
      '<p>Chronicle</p>',
    ].join('\n'),
  );
  return { template: 'password-reset', subject, text, html };
}
