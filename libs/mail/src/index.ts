export * from './mailer.port';
export * from './mail.module';
export * from './smtp/smtp-mailer';
export * from './outbox/outbox-mailer';
export type { MailContent } from './templates/mail-content';
export * from './templates/password-reset.email';
export * from './templates/password-changed.email';
export * from './mail-report';
