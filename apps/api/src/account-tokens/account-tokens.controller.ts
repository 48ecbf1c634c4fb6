import { BadRequestException, Controller, Delete, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiSecurity,
  ApiNoContentResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import {
  CommandContext,
  EndSessionCommand,
  IssueAccessTokenCommand,
  Principal,
} from '@chronicle/application';
import { AccountSessions, Allow, CurrentPrincipal, QUERY_TOKEN_PARAMETER } from '@chronicle/auth';
import { ChronicleConfig } from '@chronicle/config';
import { ApiCredentials, ApiProblems } from '../http/openapi';
import { WriteContext } from '../http/write-context.decorator';
import { AccessTokenDto } from './access-token.dto';

@ApiTags('account')
// Every account manages its own tokens, an auditor's included.
@Allow('user', 'auditor')
@Controller('api/v1/account/tokens')
export class AccountTokensController {
  constructor(
    private readonly commands: CommandBus,
    private readonly sessions: AccountSessions,
    private readonly config: ChronicleConfig,
  ) {}

  @Post()
  @ApiCredentials()
  @ApiOperation({
    summary: 'Issue an access token for the authenticated account (no request body)',
    description:
      'Basic credentials start a session; a bearer token mints a token of its own session, which expires ' +
      "no later than the session's first token.",
  })
  @ApiCreatedResponse({ type: AccessTokenDto })
  @ApiProblems(400, 401, 415)
  async issue(
    @CurrentPrincipal() principal: Principal,
    @WriteContext() context: CommandContext,
  ): Promise<AccessTokenDto> {
    const issued = await this.commands.execute(
      new IssueAccessTokenCommand(principal, this.config.accessTokenTtlSeconds, context),
    );
    return { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn };
  }

  @Delete('current')
  @HttpCode(204)
  @ApiBearerAuth('bearer')
  @ApiSecurity(QUERY_TOKEN_PARAMETER)
  @ApiOperation({
    summary:
      'End the session of the access token this request carries: every token of the session stops working',
  })
  @ApiNoContentResponse({ description: 'The session ended.' })
  @ApiProblems(400, 401)
  async revokeCurrent(
    @CurrentPrincipal() principal: Principal,
    @WriteContext() context: CommandContext,
  ): Promise<void> {
    if (principal.tokenId === undefined || principal.sessionId === undefined) {
      throw new BadRequestException({
        type: 'no-access-token',
        title: 'No access token to revoke',
        detail: 'Authenticate with the access token that is to be revoked.',
      });
    }
    const { sessionExpiresAt } = await this.commands.execute(
      new EndSessionCommand(principal.accountId, principal.sessionId, principal.tokenId, context),
    );
    this.sessions.sessionEnded(principal.accountId, principal.sessionId, sessionExpiresAt);
  }
}
