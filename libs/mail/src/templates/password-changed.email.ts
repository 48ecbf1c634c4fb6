import { escapeHtml } from './html-escape';
import { formatUtc, htmlDocument, MailContent } from './mail-content';

export interface PasswordChangedEmailInput {
  to: string;
  changedAt: Date;
}

/** The notice sent after a password reset or change, so an owner notices a change they did not make. */
export function passwordChangedEmail({ to, changedAt }: PasswordChangedEmailInput): MailContent {
  const subject = 'Your Chronicle password was changed';
  const when = formatUtc(changedAt);
  const changed = `The password of the Chronicle account ${to} was changed at ${when}.`;
  const signedOut =
    'Every access token issued before the change has been revoked, so you need to sign in again.';
  const notYou =
    'If you did not make this change, request a password reset right away and contact your administrator.';
  const text = ['Hello,', '', changed, signedOut, '', notYou, '', 'Chronicle', ''].join('\n');
  const html = htmlDocument(
    subject,
    [
      '<p>Hello,</p>',
      `<p>${escapeHtml(changed)}`,
      `${escapeHtml(signedOut)}</p>`,
      `<p>${escapeHtml(notYou)}</p>`,
      '<p>Chronicle</p>',
    ].join('\n'),
  );
  return { template: 'password-changed', subject, text, html };
}
