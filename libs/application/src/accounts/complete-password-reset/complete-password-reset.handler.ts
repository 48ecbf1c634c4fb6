import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  accountDecider,
  accountStreamName,
  credentialsVersionAfter,
  InvalidResetTokenError,
  PasswordReset,
} from '@chronicle/domain';
import { Clock } from '../../shared/clock';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { PasswordHasher } from '../../shared/security.ports';
import { hashNewPassword } from '../new-password';
import { parseResetToken } from '../reset-token';
import { CompletePasswordResetCommand, PasswordChangeResult } from './complete-password-reset.command';

@CommandHandler(CompletePasswordResetCommand)
export class CompletePasswordResetHandler implements ICommandHandler<
  CompletePasswordResetCommand,
  PasswordChangeResult
> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly hasher: PasswordHasher,
    private readonly clock: Clock,
  ) {}

  async execute({
    token,
    newPassword,
    context,
  }: CompletePasswordResetCommand): Promise<PasswordChangeResult> {
    const parsed = parseResetToken(token);
    if (!parsed) throw new InvalidResetTokenError();
    const stream = accountStreamName(parsed.accountId);
    const { state } = await this.repository.load(accountDecider, stream);
    // The token is checked (by decide itself, in constant time) before the policy, and consumed
    // only after it: a refused password leaves the token usable for a better one.
    const now = this.clock.now().toISOString();
    accountDecider.decide(
      { type: 'ResetPassword', tokenHash: parsed.tokenHash, passwordHash: '', now },
      state,
    );
    if (!state.exists) throw new InvalidResetTokenError();
    const passwordHash = await hashNewPassword(this.hasher, newPassword, state.email);
    // decide() checks the token again against the stream as it is when appending (constant time).
    const result = await this.repository.handle(
      accountDecider,
      stream,
      (_state, now) => ({
        type: 'ResetPassword' as const,
        tokenHash: parsed.tokenHash,
        passwordHash,
        now: now.toISOString(),
      }),
      context,
    );
    const [reset] = result.events as PasswordReset[];
    return {
      accountId: parsed.accountId,
      credentialsVersion: credentialsVersionAfter(state.credentialsVersion, reset),
      position: result.position,
    };
  }
}
