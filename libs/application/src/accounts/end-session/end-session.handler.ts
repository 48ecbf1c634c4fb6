import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Session, sessionDecider, sessionStreamName } from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { EndSessionCommand } from './end-session.command';

@CommandHandler(EndSessionCommand)
export class EndSessionHandler implements ICommandHandler<EndSessionCommand, { sessionExpiresAt: number }> {
  constructor(private readonly repository: EventSourcedRepository) {}

  async execute({ accountId, sessionId, tokenId, context }: EndSessionCommand) {
    const { state } = await this.repository.handle(
      sessionDecider,
      sessionStreamName(sessionId),
      (_state, now) => ({ type: 'EndSession' as const, accountId, tokenId, now: now.toISOString() }),
      context,
    );
    // The decider refused a missing session, or one that is not the account's (NotFoundError).
    return { sessionExpiresAt: Date.parse((state as Session).expiresAt) };
  }
}
