import { Command } from '@nestjs/cqrs';
import { Position } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';

export interface PasswordChangeResult {
  accountId: string;
  /** The account's credentials version after the change: tokens of older ones no longer work. */
  credentialsVersion: number;
  position: Position | null;
}

export class CompletePasswordResetCommand extends Command<PasswordChangeResult> {
  constructor(
    readonly token: string,
    readonly newPassword: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}
