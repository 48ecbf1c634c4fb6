import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Customer, customerDecider, customerStreamName, parseCustomerFields } from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { ChangeCustomerCommand, CustomerResult } from './change-customer.command';

@CommandHandler(ChangeCustomerCommand)
export class ChangeCustomerHandler implements ICommandHandler<ChangeCustomerCommand, CustomerResult> {
  constructor(private readonly repository: EventSourcedRepository) {}

  async execute({ customerId, patch, context, ifMatch }: ChangeCustomerCommand): Promise<CustomerResult> {
    // Parsed before the customer is looked for: an invalid patch is refused the same for every id.
    const values = parseCustomerFields(patch, 'patch');
    const result = await this.repository.handle(
      customerDecider,
      customerStreamName(customerId),
      () => ({ type: 'ChangeCustomer' as const, values }),
      context,
      { ifMatch },
    );
    // The decider refused a customer that does not exist (NotFoundError): a handled change's state
    // is a customer, and its stream has a revision.
    return { customer: result.state as Customer, revision: result.revision! };
  }
}
