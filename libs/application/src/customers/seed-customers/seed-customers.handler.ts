import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CustomerClientFields } from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { Clock } from '../../shared/clock';
import { CustomerNumberAllocator } from '../customer-number-allocator';
import { registerCustomers } from '../register-customer/register-customer.handler';
import { SeedCustomersCommand, SeedCustomersResult } from './seed-customers.command';

const FIRST_NAMES = [
  'Ada',
  'Alan',
  'Barbara',
  'Claude',
  'Edsger',
  'Frances',
  'Grace',
  'Ivan',
  'Katherine',
  'Linus',
];
const LAST_NAMES = [
  'Lovelace',
  'Turing',
  'Liskov',
  'Shannon',
  'Dijkstra',
  'Allen',
  'Hopper',
  'Sutherland',
  'Johnson',
];
/** Numbers allocated per sequence append: one append per chunk instead of one per customer. */
const CHUNK = 2_000;
/** Appends in flight at once, so that the store can commit many of them together. */
const CONCURRENCY = 256;

export function demoCustomer(n: number): CustomerClientFields {
  const first = FIRST_NAMES[n % FIRST_NAMES.length];
  const last = LAST_NAMES[Math.floor(n / FIRST_NAMES.length) % LAST_NAMES.length];
  return { name: `${first} ${last}`, email: `${first}.${last}.${n}@example.com`.toLowerCase() };
}

@CommandHandler(SeedCustomersCommand)
export class SeedCustomersHandler implements ICommandHandler<SeedCustomersCommand, SeedCustomersResult> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly numbers: CustomerNumberAllocator,
  ) {}

  async execute({ count, context, onProgress }: SeedCustomersCommand): Promise<SeedCustomersResult> {
    let firstId: number | null = null;
    let lastId: number | null = null;
    for (let done = 0; done < count;) {
      const size = Math.min(CHUNK, count - done);
      const customers = Array.from({ length: size }, (_, i) => demoCustomer(done + i + 1));
      const registered = await registerCustomers(
        this.store,
        this.clock,
        this.numbers,
        customers,
        context,
        CONCURRENCY,
      );
      firstId ??= registered[0].id;
      lastId = registered[registered.length - 1].id;
      done += size;
      onProgress?.(done);
    }
    return { created: count, firstId, lastId };
  }
}
