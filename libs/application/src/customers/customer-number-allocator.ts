import { Injectable } from '@nestjs/common';
import { assignCustomerNumbers, CUSTOMER_SEQUENCE_STREAM } from '@chronicle/domain';
import { EventStore, WrongExpectedRevisionError } from '@chronicle/event-store';
import { ConcurrencyConflictError } from '../shared/application-errors';
import { Clock } from '../shared/clock';
import { CommandContext } from '../shared/command-context';
import { toNewEvent } from '../shared/event-sourced-repository';

const MAX_ATTEMPTS = 20;

/**
 * Hands out integer customer ids from one sequence stream: number n is the event at revision n-1.
 * It never reads the stream: a conflict tells the actual revision, and the next try starts there.
 */
@Injectable()
export class CustomerNumberAllocator {
  private lastRevision: number | 'no_stream' = 'no_stream';
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  /** Reserves `count` consecutive new customer ids. */
  allocate(count: number, context: CommandContext): Promise<number[]> {
    // One allocation at a time in this process; other processes are handled by the revision check.
    const next = this.queue.then(() => this.allocateNow(count, context));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async allocateNow(count: number, context: CommandContext): Promise<number[]> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const expected = this.lastRevision;
      const taken = expected === 'no_stream' ? 0 : expected + 1;
      const now = this.clock.now();
      const events = assignCustomerNumbers(taken, count);
      try {
        const result = await this.store.append(
          CUSTOMER_SEQUENCE_STREAM,
          events.map((event) => toNewEvent(event, context, now)),
          expected,
        );
        this.lastRevision = result.nextExpectedRevision;
        return events.map((event) => event.data.customerId);
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        this.lastRevision = error.actual;
      }
    }
    throw new ConcurrencyConflictError(CUSTOMER_SEQUENCE_STREAM);
  }
}
