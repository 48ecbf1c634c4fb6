import { Command } from '@nestjs/cqrs';
import { Position } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';

export interface PasswordChangeResult {
  accountId: string;
  /** The instant of the change: access tokens issued up to then no longer work. */
  changedAt: string;
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
