import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

/** Ends the session of the access token `tokenId`: every token of the session stops working. */
export class EndSessionCommand extends Command<{ sessionExpiresAt: number }> {
  constructor(
    readonly accountId: string,
    readonly sessionId: string,
    readonly tokenId: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}
