/** One e-mail, with plain-text and HTML alternatives of the same content. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /**
   * Stable id: the same message sent twice (a retry after a crash) carries the same Message-ID, so
   * an outbox overwrites rather than duplicates. Letters, digits, `_` and `-`, optionally in
   * dot-separated parts. Not secret: it becomes the Message-ID and the outbox file name.
   */
  id: string;
  /** The template it was made from (`password-reset`...), for the log line and metrics. */
  template?: string;
}

/** Told of every send's outcome: the mail log line and metrics. */
export interface MailObserver {
  sent(message: MailMessage): void;
  failed(message: MailMessage, error: unknown): void;
}

/**
 * Sends e-mail. A rejected promise means the message may not have been delivered: send it again.
 * Adapters implement `deliver`; every send, whatever the adapter, is reported here once.
 */
export abstract class Mailer {
  private observer: MailObserver | null = null;

  observe(observer: MailObserver): this {
    this.observer = observer;
    return this;
  }

  /**
   * Deletes every message to `address` that the service itself keeps (a person's erasure), and
   * answers how many. An adapter that hands mail on and keeps no copy (SMTP) keeps none.
   */
  forget(_address: string): Promise<number> {
    return Promise.resolve(0);
  }

  async send(message: MailMessage): Promise<void> {
    try {
      await this.deliver(message);
    } catch (error) {
      this.observer?.failed(message, error);
      throw error;
    }
    this.observer?.sent(message);
  }

  protected abstract deliver(message: MailMessage): Promise<void>;
}

/** The receiving side refused the message for good (an SMTP 5xx): sending it again cannot help. */
export class MailRejectedError extends Error {
  constructor(
    readonly responseCode: number,
    response: string,
  ) {
    super(`The mail server refused the message: ${response}`);
    this.name = 'MailRejectedError';
  }
}
