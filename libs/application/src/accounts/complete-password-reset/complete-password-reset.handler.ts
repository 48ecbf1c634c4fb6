import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  accountDecider,
  accountStreamName,
  credentialsVersionAfter,
  InvalidResetTokenError,
  isUsableResetToken,
  PasswordReset,
  passwordResetStreamName,
  resetRequestDecider,
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
    // The token's own request says whose it is, whether it matches (in constant time) and until when.
    const { state: request } = await this.repository.load(
      resetRequestDecider,
      passwordResetStreamName(parsed.requestId),
    );
    if (!isUsableResetToken(request, parsed.tokenHash, this.clock.now().toISOString()) || !request.exists) {
      throw new InvalidResetTokenError();
    }
    const resetWith = (passwordHash: string, now: Date) => {
      if (!isUsableResetToken(request, parsed.tokenHash, now.toISOString()))
        throw new InvalidResetTokenError();
      return {
        type: 'ResetPassword' as const,
        tokenId: parsed.requestId,
        tokenCredentialsVersion: request.credentialsVersion,
        passwordHash,
        now: now.toISOString(),
      };
    };
    const stream = accountStreamName(request.accountId);
    const { state } = await this.repository.load(accountDecider, stream);
    // The account decides whether the token is still current (not used, no change since) before
    // the policy, and it is consumed only after it: a refused password leaves it usable for a better one.
    accountDecider.decide(resetWith('', this.clock.now()), state);
    if (!state.exists) throw new InvalidResetTokenError();
    const passwordHash = await hashNewPassword(this.hasher, newPassword, state.email);
    // Decided again on the account as it is when appending: a concurrent use of the token loses.
    const result = await this.repository.handle(
      accountDecider,
      stream,
      (_state, now) => resetWith(passwordHash, now),
      context,
    );
    const [reset] = result.events as PasswordReset[];
    return {
      accountId: request.accountId,
      credentialsVersion: credentialsVersionAfter(state.credentialsVersion, reset),
      position: result.position,
    };
  }
}
