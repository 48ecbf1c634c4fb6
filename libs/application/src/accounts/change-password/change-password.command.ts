import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';
import { Principal } from '../../shared/principal';
import { PasswordChangeResult } from '../complete-password-reset/complete-password-reset.command';

export class ChangePasswordCommand extends Command<PasswordChangeResult> {
  constructor(
    readonly principal: Principal,
    readonly oldPassword: string,
    readonly newPassword: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}
