import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

export class RequestPasswordResetCommand extends Command<void> {
  constructor(
    readonly email: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}
