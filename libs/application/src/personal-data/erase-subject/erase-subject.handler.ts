import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  customerDecider,
  customerStreamName,
  parseCustomerNumber,
  SubjectErased,
  userDecider,
  userStreamName,
} from '@chronicle/domain';
import { EventStore, formatPosition } from '@chronicle/event-store';
import { NotFoundError } from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { ErasureCompletion } from '../complete-erasure/erasure-completion';
import { EraseSubjectCommand, ErasureResult } from './erase-subject.command';

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
    let stream: string;
    if (kind === 'user') {
      stream = userStreamName(id);
      await this.repository.handle(
        userDecider,
        stream,
        (_state, now) => ({
          type: 'EraseUser' as const,
          userId: id,
          now: now.toISOString(),
        }),
        context,
      );
    } else {
      // A customer number, as GET /customers/{id} takes it: anything else names no customer.
      const customerId = parseCustomerNumber(id);
      if (customerId === undefined) throw new NotFoundError('Customer');
      stream = customerStreamName(customerId);
      await this.repository.handle(
        customerDecider,
        stream,
        (_state, now) => ({
          type: 'EraseCustomer' as const,
          customerId,
          now: now.toISOString(),
        }),
        context,
      );
    }
    // The erasure as recorded: this one, or the first on a repeat.
    const recorded = (await this.store.readStream(stream)).find((event) => event.type === 'SubjectErased.v1');
    if (recorded === undefined)
      throw new Error(`${stream} was erased, but its SubjectErased.v1 is not in it`);
    const { erasedAt } = recorded.data as SubjectErased['data'];
    await this.completion.complete(recorded.data as SubjectErased['data'], context);
    return { subject: stream, kind, erasedAt, position: formatPosition(recorded.position) };
  }
}
