import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  Customer,
  customerStreamName,
  evolveCustomer,
  decideCustomer,
  initialCustomerState,
  parseCustomerFields,
} from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { Clock } from '../../shared/clock';
import { CommandContext } from '../../shared/command-context';
import { toNewEvent } from '../../shared/event-sourced-repository';
import { CustomerResult } from '../change-customer/change-customer.command';
import { CustomerNumberAllocator } from '../customer-number-allocator';
import { RegisterCustomerCommand } from './register-customer.command';

/** Registers customers under freshly allocated numbers; shared by the single and the bulk command. */
export async function registerCustomers(
  store: EventStore,
  clock: Clock,
  numbers: CustomerNumberAllocator,
  customers: Record<string, unknown>[],
  context: CommandContext,
  concurrency = 1,
): Promise<Customer[]> {
  // Validate everything before a number is spent.
  const valid = customers.map((customer) => parseCustomerFields(customer, 'all'));
  const ids = await numbers.allocate(valid.length, context);
  const registered = new Array<Customer>(valid.length);
  let next = 0;
  const worker = async () => {
    while (next < valid.length) {
      const index = next++;
      const now = clock.now();
      const command = {
        type: 'RegisterCustomer' as const,
        customerId: ids[index],
        fields: valid[index],
        now: now.toISOString(),
      };
      // A fresh number's stream cannot exist yet: decide on the initial state, append with "no stream".
      const events = decideCustomer(command, initialCustomerState);
      await store.append(
        customerStreamName(ids[index]),
        events.map((event) => toNewEvent(event, context, now)),
        'no_stream',
      );
      registered[index] = evolveCustomer(initialCustomerState, events[0]) as Customer;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, valid.length) }, worker));
  return registered;
}

@CommandHandler(RegisterCustomerCommand)
export class RegisterCustomerHandler implements ICommandHandler<RegisterCustomerCommand, CustomerResult> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly numbers: CustomerNumberAllocator,
  ) {}

  async execute({ fields, context }: RegisterCustomerCommand): Promise<CustomerResult> {
    const [customer] = await registerCustomers(this.store, this.clock, this.numbers, [fields], context);
    // The stream's first event: revision 0.
    return { customer, revision: 0 };
  }
}
