import { Injectable } from '@nestjs/common';
import {
  accountDecider,
  accountStreamName,
  ErasedUser,
  erasedSubjectOf,
  NotFoundError,
  SubjectErased,
  userDecider,
} from '@chronicle/domain';
import {
  DataKeyRing,
  DataSubject,
  ErasureLog,
  EventStore,
  RecordedEvent,
  subjectName,
} from '@chronicle/event-store';
import { Mailer } from '@chronicle/mail';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository, foldEvents } from '../../shared/event-sourced-repository';

/**
 * What follows a SubjectErased.v1, done by the erasure itself and again by the saga (after a
 * crash between the two): a person's kept e-mails are deleted and their account closed (its
 * tokens stop working, its address is free), then the erasure is logged apart from DATA_DIR (for
 * `restore`) and the subject's data key destroyed. Each step is idempotent, so doing it twice is
 * harmless.
 */
@Injectable()
export class ErasureCompletion {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly keys: DataKeyRing,
    private readonly mailer: Mailer,
    private readonly store: EventStore,
    private readonly log: ErasureLog,
  ) {}

  /**
   * `events`: the subject's stream, SubjectErased.v1 included, when the caller has just read it
   * (the erasure); the saga has none in hand, so it is read here, once.
   */
  async complete(
    erased: SubjectErased['data'],
    context: CommandContext,
    events?: readonly RecordedEvent[],
  ): Promise<void> {
    const stream = events ?? (await this.store.readStream(erased.subject));
    const whose = erasedSubjectOf(erased);
    if (whose.kind === 'user') {
      const { accountId } = foldEvents(userDecider, stream) as ErasedUser;
      if (accountId !== null) await this.closeAccount(accountId, context);
    }
    const subject: DataSubject = {
      kind: whose.kind,
      id: whose.kind === 'user' ? whose.userId : String(whose.customerId),
    };
    await this.logOnce(subject, erased, stream[0]);
    await this.keys.destroy({ subject, erasedAt: erased.erasedAt });
  }

  /**
   * Logged before the key goes, so that no key is destroyed unlogged; once it is gone, not again
   * (a repeated DELETE adds nothing). A crash in between logs it twice, which reads as once.
   */
  private async logOnce(
    subject: DataSubject,
    erased: SubjectErased['data'],
    first: RecordedEvent,
  ): Promise<void> {
    const held = (await this.keys.forReading([subject])).get(subjectName(subject));
    if (held?.state === 'erased') return;
    await this.log.append({ subject, erasedAt: erased.erasedAt, firstEventId: first.id });
  }

  /**
   * The e-mails kept for the person (the outbox) go first, while the account still names their
   * address: a crash after closing it would leave the address unknown, and the messages kept.
   */
  private async closeAccount(accountId: string, context: CommandContext): Promise<void> {
    const { state } = await this.repository.load(accountDecider, accountStreamName(accountId));
    // Null once the key is gone: then the e-mails went before it (see above).
    if (state.exists && typeof state.email === 'string') await this.mailer.forget(state.email);
    try {
      await this.repository.handle(
        accountDecider,
        accountStreamName(accountId),
        (_state, now) => ({ type: 'CloseAccount' as const, now: now.toISOString() }),
        context,
      );
    } catch (error) {
      // A user registered without its account ever opened (a crash between the two): none to close.
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
}
