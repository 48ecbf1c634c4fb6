import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

export class RevokeAccessTokenCommand extends Command<void> {
  constructor(
    readonly accountId: string,
    readonly tokenId: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}
