import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  customerStreamName,
  decideCustomer,
  initialCustomerState,
  validateNewCustomer,
} from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { Clock } from '../../shared/clock';
import { CommandContext } from '../../shared/command-context';
import { toNewEvent } from '../../shared/event-sourced-repository';
import { CustomerNumberAllocator } from '../customer-number-allocator';
import { RegisterCustomerCommand } from './register-customer.command';

/** Registers customers under freshly allocated numbers; shared by the single and the bulk command. */
export async function registerCustomers(
  store: EventStore,
  clock: Clock,
  numbers: CustomerNumberAllocator,
  customers: { name: unknown; email: unknown }[],
  context: CommandContext,
  concurrency = 1,
): Promise<number[]> {
  // Validate everything before a number is spent.
  const valid = customers.map((customer) => validateNewCustomer(customer.name, customer.email));
  const ids = await numbers.allocate(valid.length, context);
  let next = 0;
  const worker = async () => {
    while (next < valid.length) {
      const index = next++;
      const now = clock.now();
      const command = {
        type: 'RegisterCustomer' as const,
        customerId: ids[index],
        ...valid[index],
        now: now.toISOString(),
      };
      // A fresh number's stream cannot exist yet: decide on the initial state, append with "no stream".
      const events = decideCustomer(command, initialCustomerState);
      await store.append(
        customerStreamName(ids[index]),
        events.map((event) => toNewEvent(event, context, now)),
        'no_stream',
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, valid.length) }, worker));
  return ids;
}

@CommandHandler(RegisterCustomerCommand)
export class RegisterCustomerHandler implements ICommandHandler<RegisterCustomerCommand, { id: number }> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly numbers: CustomerNumberAllocator,
  ) {}

  async execute({ name, email, context }: RegisterCustomerCommand): Promise<{ id: number }> {
    const [id] = await registerCustomers(this.store, this.clock, this.numbers, [{ name, email }], context);
    return { id };
  }
}
