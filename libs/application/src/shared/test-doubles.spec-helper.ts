import { Mailer, MailMessage } from '@chronicle/mail';
import { Clock } from './clock';

/** A clock a spec sets and moves itself. */
export class FixedClock extends Clock {
  constructor(public time: number) {
    super();
  }

  now(): Date {
    return new Date(this.time);
  }
}

/** Keeps every message it is given; `failNext` sends fail first, as a dropped connection would. */
export class RecordingMailer extends Mailer {
  readonly sent: MailMessage[] = [];
  failNext = 0;

  protected deliver(message: MailMessage): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      return Promise.reject(new Error('connection reset'));
    }
    this.sent.push(message);
    return Promise.resolve();
  }
}
