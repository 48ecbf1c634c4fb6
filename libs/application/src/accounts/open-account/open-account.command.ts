import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

/** What an account may do: a user's own things, everything (admin), or read the history (auditor). */
export type AccountKind = 'user' | 'admin' | 'auditor';

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
    readonly kind: AccountKind,
    readonly context: CommandContext,
  ) {
    super();
  }
}
