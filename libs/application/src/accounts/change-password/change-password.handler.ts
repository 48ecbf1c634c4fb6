import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  accountDecider,
  accountStreamName,
  credentialsVersionAfter,
  NotFoundError,
  PasswordChanged,
  WrongPasswordError,
} from '@chronicle/domain';
import { AttemptLimits } from '../../shared/attempt-limits';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { PasswordHasher } from '../../shared/security.ports';
import { hashNewPassword } from '../new-password';
import { PasswordChangeResult } from '../complete-password-reset/complete-password-reset.command';
import { ChangePasswordCommand } from './change-password.command';

@CommandHandler(ChangePasswordCommand)
export class ChangePasswordHandler implements ICommandHandler<ChangePasswordCommand, PasswordChangeResult> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly hasher: PasswordHasher,
    private readonly limits: AttemptLimits,
  ) {}

  async execute({
    principal,
    oldPassword,
    newPassword,
    context,
  }: ChangePasswordCommand): Promise<PasswordChangeResult> {
    const stream = accountStreamName(principal.accountId);
    const { state, revision } = await this.repository.load(accountDecider, stream);
    if (!state.exists || revision === null) throw new NotFoundError('Account');
    // A wrong `old` is a failed password check, counted where only the account's holder can add.
    const proved = await this.limits.oldPasswordCheck(principal.accountId, async () =>
      (await this.hasher.verify(state.passwordHash, oldPassword)) ? true : null,
    );
    if (!proved) throw new WrongPasswordError();
    const passwordHash = await hashNewPassword(this.hasher, newPassword, state.email);
    // Decided again on fresh state after any conflict, reusing this hash: only a change of the
    // password `old` was checked against stops it, never another write to the account.
    const result = await this.repository.handle(
      accountDecider,
      stream,
      (_state, now) => ({
        type: 'ChangePassword' as const,
        passwordHash,
        verifiedPasswordHash: state.passwordHash,
        now: now.toISOString(),
      }),
      context,
    );
    const [changed] = result.events as PasswordChanged[];
    return {
      accountId: principal.accountId,
      credentialsVersion: credentialsVersionAfter(state.credentialsVersion, changed),
      position: result.position,
    };
  }
}
