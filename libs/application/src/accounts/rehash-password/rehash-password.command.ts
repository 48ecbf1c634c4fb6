import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

/**
 * Replaces a hash of the password as sent before passwords were prepared (RFC 8265) with a hash
 * of it as prepared, once a login has proved it against `verifiedPasswordHash`.
 */
export class RehashPasswordCommand extends Command<void> {
  constructor(
    readonly accountId: string,
    readonly password: string,
    readonly verifiedPasswordHash: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}
