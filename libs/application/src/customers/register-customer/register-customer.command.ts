import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

export class RegisterCustomerCommand extends Command<{ id: number }> {
  constructor(
    readonly name: unknown,
    readonly email: unknown,
    readonly context: CommandContext,
  ) {
    super();
  }
}
