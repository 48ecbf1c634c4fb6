import { Injectable } from '@nestjs/common';
import {
  accountDecider,
  accountStreamName,
  ErasedUser,
  NotFoundError,
  SubjectErased,
  userDecider,
} from '@chronicle/domain';
import { DataKeyRing } from '@chronicle/event-store';
import { Mailer } from '@chronicle/mail';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';

/**
 * What follows a SubjectErased.v1, done by the erasure itself and again by the saga (after a
 * crash between the two): a person's kept e-mails are deleted and their account closed (its
 * tokens stop working, its address is free), then the subject's data key is destroyed. Each step is idempotent, so doing it twice is
 * harmless.
 */
@Injectable()
export class ErasureCompletion {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly keys: DataKeyRing,
    private readonly mailer: Mailer,
  ) {}

  async complete(erased: SubjectErased['data'], context: CommandContext): Promise<void> {
    const id = erased.subject.slice(erased.kind.length + 1);
    if (erased.kind === 'user') {
      const { state } = await this.repository.load(userDecider, erased.subject);
      const { accountId } = state as ErasedUser;
      if (accountId !== null) await this.closeAccount(accountId, context);
    }
    await this.keys.destroy({ subject: { kind: erased.kind, id }, erasedAt: erased.erasedAt });
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
