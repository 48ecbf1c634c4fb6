import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import {
  customerDecider,
  customerStreamName,
  ErasedError,
  isErasedSubject,
  NotFoundError,
} from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { CustomerResult } from '../change-customer/change-customer.command';
import { GetCustomerQuery } from './get-customer.query';

/**
 * One customer, folded from its stream: it reflects every write answered before the request on
 * every deployment, whatever the projector's lag, with the revision that is its ETag. The
 * repository keeps recent folded states, so a read costs one read of the stream's tail (empty,
 * nearly always).
 */
@QueryHandler(GetCustomerQuery)
export class GetCustomerHandler implements IQueryHandler<GetCustomerQuery, CustomerResult> {
  constructor(private readonly repository: EventSourcedRepository) {}

  async execute({ customerId }: GetCustomerQuery): Promise<CustomerResult> {
    const { state, revision } = await this.repository.load(customerDecider, customerStreamName(customerId));
    if (isErasedSubject(state)) throw new ErasedError('Customer', state.erasedAt);
    if (!state.exists || revision === null) throw new NotFoundError('Customer');
    return { customer: state, revision };
  }
}
