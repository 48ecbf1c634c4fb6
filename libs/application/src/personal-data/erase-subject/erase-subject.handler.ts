import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  customerDecider,
  customerStreamName,
  Decider,
  DomainEvent,
  ErasedSubjectKind,
  NotFoundError,
  parseCustomerNumber,
  SubjectErased,
  userDecider,
  userStreamName,
} from '@chronicle/domain';
import { EventStore, formatPosition } from '@chronicle/event-store';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { ErasureCompletion } from '../complete-erasure/erasure-completion';
import { EraseSubjectCommand, ErasureResult } from './erase-subject.command';

/** What erasing a subject takes: its stream, its decider and that decider's command to erase it. */
interface SubjectErasure {
  stream: string;
  decider: Decider<unknown, unknown, DomainEvent>;
  command: (now: string) => unknown;
}

/** A subject's erasure, its command checked against its decider. */
function subjectErasure<S, C, E extends DomainEvent>(
  decider: Decider<S, C, E>,
  stream: string,
  command: (now: string) => NoInfer<C>,
): SubjectErasure {
  return { decider, stream, command };
}

/** Each kind of subject's erasure, from the id the command names it by. */
const ERASURES: Record<ErasedSubjectKind, (id: string) => SubjectErasure> = {
  user: (userId) =>
    subjectErasure(userDecider, userStreamName(userId), (now) => ({
      type: 'EraseUser' as const,
      userId,
      now,
    })),
  customer: (id) => {
    // A customer number, as GET /customers/{id} takes it: anything else names no customer.
    const customerId = parseCustomerNumber(id);
    if (customerId === undefined) throw new NotFoundError('Customer');
    return subjectErasure(customerDecider, customerStreamName(customerId), (now) => ({
      type: 'EraseCustomer' as const,
      customerId,
      now,
    }));
  },
};

/**
 * Appends SubjectErased.v1 to the subject's stream (the erasure's commit point: a PATCH racing it
 * loses on the stream's revision), then completes it at once: the account closed, the key
 * destroyed. A crash in between is completed by the saga, which follows every SubjectErased.v1.
 */
@CommandHandler(EraseSubjectCommand)
export class EraseSubjectHandler implements ICommandHandler<EraseSubjectCommand, ErasureResult> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly store: EventStore,
    private readonly completion: ErasureCompletion,
  ) {}

  async execute({ kind, id, context }: EraseSubjectCommand): Promise<ErasureResult> {
    const { stream, decider, command } = ERASURES[kind](id);
    await this.repository.handle(decider, stream, (_state, now) => command(now.toISOString()), context);
    // The erasure as recorded: this one, or the first on a repeat.
    const events = await this.store.readStream(stream);
    const recorded = events.find((event) => event.type === 'SubjectErased.v1');
    if (recorded === undefined)
      throw new Error(`${stream} was erased, but its SubjectErased.v1 is not in it`);
    const { erasedAt } = recorded.data as SubjectErased['data'];
    // The stream as just read: the completion needs no read of its own.
    await this.completion.complete(recorded.data as SubjectErased['data'], context, events);
    return { subject: stream, kind, erasedAt, position: formatPosition(recorded.position) };
  }
}
