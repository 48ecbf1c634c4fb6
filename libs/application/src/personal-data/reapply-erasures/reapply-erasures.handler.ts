import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ErasureLog, EventStore, subjectName } from '@chronicle/event-store';
import { EraseSubjectCommand, ErasureResult } from '../erase-subject/erase-subject.command';
import { ReappliedErasures, ReapplyErasuresCommand } from './reapply-erasures.command';

/**
 * Each logged subject whose stream begins with the event the log names goes through the erasure
 * itself (EraseSubjectCommand): its SubjectErased.v1 appended unless the history has it, its
 * e-mails and account closed, its key destroyed. Idempotent, like the erasure.
 */
@CommandHandler(ReapplyErasuresCommand)
export class ReapplyErasuresHandler implements ICommandHandler<ReapplyErasuresCommand, ReappliedErasures> {
  constructor(
    private readonly log: ErasureLog,
    private readonly store: EventStore,
    private readonly commands: CommandBus,
  ) {}

  async execute({ context }: ReapplyErasuresCommand): Promise<ReappliedErasures> {
    const { erasures, unreadable } = await this.log.read();
    const reapplied: ErasureResult[] = [];
    let notHeld = 0;
    for (const { subject, firstEventId } of erasures) {
      const [first] = await this.store.readStream(subjectName(subject));
      if (first?.id !== firstEventId) {
        notHeld += 1;
        continue;
      }
      reapplied.push(await this.commands.execute(new EraseSubjectCommand(subject.kind, subject.id, context)));
    }
    return { reapplied, notHeld, unreadable };
  }
}
