import { Command } from '@nestjs/cqrs';
import { Customer } from '@chronicle/domain';
import { CommandContext } from '../../shared/command-context';

export interface CustomerResult {
  customer: Customer;
  /** The customer stream's revision: the customer's version (ETag). */
  revision: number;
}

export class ChangeCustomerCommand extends Command<CustomerResult> {
  constructor(
    readonly customerId: number,
    /** A merge patch body, already known to be a JSON object. */
    readonly patch: Record<string, unknown>,
    readonly context: CommandContext,
    /** The revisions If-Match accepts, when the client sent one (other than `*`). */
    readonly ifMatch?: readonly number[],
  ) {
    super();
  }
}
