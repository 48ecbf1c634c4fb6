import { escapeHtml } from './html-escape';

/** What a template produces; the caller adds the recipient and the stable message id. */
export interface MailContent {
  template: string;
  subject: string;
  text: string;
  html: string;
}

/** `2026-05-01 14:30 UTC`: unambiguous for a reader in any time zone. */
export function formatUtc(instant: Date): string {
  return `${instant.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A minimal, self-contained HTML document; `body` must already be escaped. */
export function htmlDocument(title: string, body: string): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    `<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.5;">',
    body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
