import { randomBytes } from 'node:crypto';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  accountDecider,
  accountStreamName,
  CredentialsRevokedError,
  SessionTokenIssued,
  sessionDecider,
  sessionStreamName,
} from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { AccessTokenCodec } from '../../shared/security.ports';
import { IssueAccessTokenCommand, IssuedAccessToken } from './issue-access-token.command';

const randomId = () => randomBytes(16).toString('base64url');

/**
 * Basic credentials start a session; a bearer token mints another token of its own session, which
 * expires no later than the session's first token. The token carries the credentials version its
 * request was authenticated against, so a reset or change revokes it even if it is issued after.
 */
@CommandHandler(IssueAccessTokenCommand)
export class IssueAccessTokenHandler implements ICommandHandler<IssueAccessTokenCommand, IssuedAccessToken> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly codec: AccessTokenCodec,
  ) {}

  async execute({ principal, ttlSeconds, context }: IssueAccessTokenCommand): Promise<IssuedAccessToken> {
    const account = await this.repository.load(accountDecider, accountStreamName(principal.accountId));
    if (!account.state.exists) throw new CredentialsRevokedError();
    const accountCredentialsVersion = account.state.credentialsVersion;
    const sessionId = principal.method === 'bearer' && principal.sessionId ? principal.sessionId : randomId();
    const issuedWith = principal.method === 'bearer' ? (principal.tokenId ?? null) : null;
    const tokenId = randomId();
    const { events } = await this.repository.handle(
      sessionDecider,
      sessionStreamName(sessionId),
      (_state, now) => ({
        type: 'IssueSessionToken' as const,
        accountId: principal.accountId,
        sessionId,
        tokenId,
        issuedWith,
        credentialsVersion: principal.credentialsVersion,
        accountCredentialsVersion,
        now: now.toISOString(),
        expiresAt: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
      }),
      context,
    );
    const issued = events.find(
      (event): event is SessionTokenIssued => event.type === 'SessionTokenIssued.v1',
    );
    if (!issued) throw new Error('A token issue appended no token');
    const issuedAt = Date.parse(issued.data.issuedAt);
    const expiresAt = Date.parse(issued.data.expiresAt);
    const accessToken = this.codec.sign({
      accountId: principal.accountId,
      tokenId,
      sessionId,
      credentialsVersion: principal.credentialsVersion,
      issuedAt,
      expiresAt,
    });
    return { accessToken, expiresIn: Math.max(0, Math.floor((expiresAt - issuedAt) / 1000)) };
  }
}
