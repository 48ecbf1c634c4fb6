import { randomBytes } from 'node:crypto';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { accountDecider, accountStreamName } from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { AccessTokenCodec } from '../../shared/security.ports';
import { IssueAccessTokenCommand, IssuedAccessToken } from './issue-access-token.command';

@CommandHandler(IssueAccessTokenCommand)
export class IssueAccessTokenHandler implements ICommandHandler<IssueAccessTokenCommand, IssuedAccessToken> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly codec: AccessTokenCodec,
  ) {}

  async execute({ principal, ttlSeconds, context }: IssueAccessTokenCommand): Promise<IssuedAccessToken> {
    const tokenId = randomBytes(16).toString('base64url');
    let issuedAt = 0;
    await this.repository.handle(
      accountDecider,
      accountStreamName(principal.accountId),
      (_state, now) => {
        issuedAt = now.getTime();
        return {
          type: 'IssueAccessToken' as const,
          tokenId,
          now: now.toISOString(),
          expiresAt: new Date(issuedAt + ttlSeconds * 1000).toISOString(),
        };
      },
      context,
    );
    const accessToken = this.codec.sign({
      accountId: principal.accountId,
      tokenId,
      issuedAt,
      expiresAt: issuedAt + ttlSeconds * 1000,
    });
    return { accessToken, expiresIn: ttlSeconds };
  }
}
