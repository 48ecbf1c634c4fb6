import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CommandContext, EmailTakenError, OpenAccountCommand } from '@chronicle/application';
import { Allow } from '@chronicle/auth';
import { Consumes, JSON_MEDIA_TYPE } from '../http/edge';
import { ApiCredentials, ApiProblems, refusal } from '../http/openapi';
import { requireJsonObject } from '../http/validation';
import { WriteContext } from '../http/write-context.decorator';
import { AccountCreatedDto, NEW_ACCOUNT_SCHEMA } from './new-account.dto';

@ApiTags('account')
@ApiCredentials()
@Controller('api/v1/accounts')
export class AccountsController {
  constructor(private readonly commands: CommandBus) {}

  @Post()
  @Allow()
  @Consumes(JSON_MEDIA_TYPE)
  @HttpCode(201)
  @ApiOperation({
    summary: 'Open an account with its user, and invite its owner by e-mail to set a password (admin)',
    description:
      'The account has no usable password until the link in the invitation e-mail ' +
      '(PUBLIC_BASE_URL/reset-password?token=…, single use, valid INVITATION_TTL) is completed with ' +
      'PUT /api/v1/account/password {token, new}.',
  })
  @ApiBody({
    required: true,
    schema: NEW_ACCOUNT_SCHEMA,
    examples: {
      user: { value: { email: 'grace@example.com', name: 'Grace Hopper', age: 45 } },
      admin: { value: { email: 'ada@example.com', name: 'Ada Lovelace', age: 36, roles: ['admin'] } },
    },
  })
  @ApiCreatedResponse({
    type: AccountCreatedDto,
    description: 'The account and its user; the invitation e-mail follows.',
    headers: { Location: { description: 'The new user: /users/{userId}.', schema: { type: 'string' } } },
  })
  @ApiProblems(
    400,
    401,
    403,
    413,
    415,
    422,
    refusal(new EmailTakenError(), 'an account already has this e-mail address.'),
  )
  async create(
    @Body() body: unknown,
    @WriteContext() context: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AccountCreatedDto> {
    const created = await this.commands.execute(
      new OpenAccountCommand(requireJsonObject(body, JSON_MEDIA_TYPE), null, context),
    );
    void reply.header('location', `/users/${created.userId}`);
    return created;
  }
}
