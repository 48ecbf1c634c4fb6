import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

export interface OpenAccountResult {
  accountId: string;
  userId: string;
}

export class OpenAccountCommand extends Command<OpenAccountResult> {
  constructor(
    readonly email: unknown,
    readonly password: unknown,
    readonly name: unknown,
    readonly age: unknown,
    readonly admin: boolean,
    readonly context: CommandContext,
  ) {
    super();
  }
}
