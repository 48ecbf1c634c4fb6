import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

export interface OpenAccountResult {
  accountId: string;
  userId: string;
}

/** Opens an account with its user: by the CLI with a password, by an admin with an invitation. */
export class OpenAccountCommand extends Command<OpenAccountResult> {
  constructor(
    /** As sent: `{ email, name, age, roles? }`, parsed by parseNewAccount. */
    readonly account: Record<string, unknown>,
    /** The first password; null: none yet, an invitation e-mail links to setting one. */
    readonly password: unknown,
    readonly context: CommandContext,
  ) {
    super();
  }
}
