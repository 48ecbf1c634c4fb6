import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';
import { CustomerResult } from '../change-customer/change-customer.command';

export class RegisterCustomerCommand extends Command<CustomerResult> {
  constructor(
    /** What the client sent: parsed and checked against the customer fields' declaration. */
    readonly fields: Record<string, unknown>,
    readonly context: CommandContext,
  ) {
    super();
  }
}
