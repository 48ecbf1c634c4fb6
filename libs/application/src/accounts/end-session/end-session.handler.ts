import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { NotFoundError, sessionDecider, sessionStreamName } from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { EndSessionCommand } from './end-session.command';

@CommandHandler(EndSessionCommand)
export class EndSessionHandler implements ICommandHandler<EndSessionCommand, { sessionExpiresAt: number }> {
  constructor(private readonly repository: EventSourcedRepository) {}

  async execute({ accountId, sessionId, tokenId, context }: EndSessionCommand) {
    const { state } = await this.repository.handle(
      sessionDecider,
      sessionStreamName(sessionId),
      (_state, now) => ({ type: 'EndSession' as const, tokenId, now: now.toISOString() }),
      context,
    );
    // A signed token names its own account's sessions only; anything else is a forged claim.
    if (!state.exists || state.accountId !== accountId) throw new NotFoundError('Session');
    return { sessionExpiresAt: Date.parse(state.expiresAt) };
  }
}
