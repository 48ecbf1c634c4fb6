import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { accountDecider, accountStreamName } from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { RevokeAccessTokenCommand } from './revoke-access-token.command';

@CommandHandler(RevokeAccessTokenCommand)
export class RevokeAccessTokenHandler implements ICommandHandler<RevokeAccessTokenCommand, void> {
  constructor(private readonly repository: EventSourcedRepository) {}

  async execute({ accountId, tokenId, context }: RevokeAccessTokenCommand): Promise<void> {
    await this.repository.handle(
      accountDecider,
      accountStreamName(accountId),
      (_state, now) => ({ type: 'RevokeAccessToken' as const, tokenId, now: now.toISOString() }),
      context,
    );
  }
}
