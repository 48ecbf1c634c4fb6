import { ClientFields, userDecider } from '@chronicle/domain';
import { Mailer, MailMessage } from '@chronicle/mail';
import { Clock } from './clock';
import { CommandContext } from './command-context';
import { EventSourcedRepository, HandleOptions } from './event-sourced-repository';

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

/**
 * Registers user `userId` (Ada, 30, no account, unless a spec gives other fields) through
 * `repository`: the one RegisterUser command of the specs that need a user in the event store.
 */
export function registerAda(
  repository: EventSourcedRepository,
  userId: string,
  context: CommandContext,
  options: HandleOptions = {},
  fields: ClientFields = { name: 'Ada', age: 30 },
) {
  return repository.handle(
    userDecider,
    `user-${userId}`,
    (_state, now) => ({
      type: 'RegisterUser' as const,
      userId,
      accountId: null,
      fields,
      now: now.toISOString(),
    }),
    context,
    options,
  );
}
