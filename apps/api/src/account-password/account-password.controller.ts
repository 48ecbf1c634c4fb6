import {
  BadRequestException,
  Body,
  Controller,
  HttpCode,
  Put,
  Req,
  Res,
  UnprocessableEntityException,
} from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { validate } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AttemptLimits,
  ChangePasswordCommand,
  CommandContext,
  CompletePasswordResetCommand,
  PasswordChangeResult,
  Principal,
  RequestPasswordResetCommand,
} from '@chronicle/application';
import {
  AccountSessions,
  Allow,
  AuthenticatedRequest,
  clientAddress,
  OptionalAuth,
  QUERY_TOKEN_PARAMETER,
  requireAuthentication,
} from '@chronicle/auth';
import {
  PasswordChangeDto,
  passwordFormOf,
  PasswordResetCompletionDto,
  PasswordResetRequestDto,
} from './account-password.dto';
import { Consumes, JSON_MEDIA_TYPE } from '../http/edge';
import { ApiProblems } from '../http/openapi';
import { WriteContext } from '../http/write-context.decorator';

@ApiTags('account')
@ApiExtraModels(PasswordResetRequestDto, PasswordResetCompletionDto, PasswordChangeDto)
// Every account manages its own password, an auditor's included.
@Allow('user', 'auditor')
@Controller('api/v1/account/password')
export class AccountPasswordController {
  constructor(
    private readonly commands: CommandBus,
    private readonly sessions: AccountSessions,
    private readonly limits: AttemptLimits,
  ) {}

  @Put()
  @Consumes(JSON_MEDIA_TYPE)
  @OptionalAuth()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Request a reset e-mail, complete a reset with its token, or change the password',
    description:
      'The exact set of members picks the form: {email} (202, no authentication, rate limited per client ' +
      'and per address), ' +
      '{token, new} (204, no authentication), {old, new} (204, authenticated; a wrong old counts as a ' +
      'failed password check, against a limit of the account that only its own credentials can reach).',
    // The first two forms need no credentials, the third needs them: {} makes them optional.
    security: [{}, { bearer: [] }, { basic: [] }, { [QUERY_TOKEN_PARAMETER]: [] }],
  })
  @ApiBody({
    schema: {
      oneOf: [PasswordResetRequestDto, PasswordResetCompletionDto, PasswordChangeDto].map((dto) => ({
        $ref: getSchemaPath(dto),
      })),
    },
    examples: {
      request: { summary: 'Ask for a reset e-mail', value: { email: 'ada@example.com' } },
      completion: {
        summary: 'Complete a reset',
        value: { token: '<token from the e-mail>', new: 'a new long passphrase' },
      },
      change: {
        summary: 'Change it (authenticated)',
        value: { old: 'the current passphrase', new: 'a new long passphrase' },
      },
    },
  })
  @ApiAcceptedResponse({ description: 'Reset requested: an e-mail follows if the address has an account.' })
  @ApiNoContentResponse({ description: 'Password replaced.' })
  @ApiProblems(400, 401, 413, 415, 422, 429)
  async put(
    @Body() body: unknown,
    @Req() request: FastifyRequest & AuthenticatedRequest,
    @WriteContext() context: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const form = passwordFormOf(body);
    if (!form) {
      throw new BadRequestException({
        type: 'invalid-password-request',
        title: 'Invalid password request',
        detail: 'Send exactly one of {email}, {token, new} or {old, new}.',
      });
    }
    switch (form) {
      case 'request': {
        // Counted before validation, as sent: a malformed address is no way around the limits.
        await this.limits.resetRequest(clientAddress(request), String((body as { email: unknown }).email));
        const { email } = await validated(PasswordResetRequestDto, body as object);
        await this.commands.execute(new RequestPasswordResetCommand(email, context));
        void reply.status(202);
        return;
      }
      case 'completion': {
        const completion = await validated(PasswordResetCompletionDto, body as object);
        const result = await this.commands.execute(
          new CompletePasswordResetCommand(completion.token, completion.new, context),
        );
        this.revokeOlderTokens(result);
        return;
      }
      case 'change': {
        // Credentials first: without them, a malformed body is none of the caller's business.
        const principal = request.user as Principal | undefined;
        if (!principal) throw requireAuthentication(request);
        const change = await validated(PasswordChangeDto, body as object);
        const result = await this.commands.execute(
          new ChangePasswordCommand(principal, change.old, change.new, context),
        );
        this.revokeOlderTokens(result);
        return;
      }
    }
  }

  /** This process's sessions learn of the change now rather than when its event comes round. */
  private revokeOlderTokens(result: PasswordChangeResult): void {
    this.sessions.credentialsChanged(result.accountId, result.credentialsVersion);
  }
}

/**
 * The form's DTO, validated. Its members are copied by name, never by a generic object mapper,
 * since passwordFormOf has already matched the body's exact members. A member of the wrong
 * JSON type is a malformed request (400); a string that breaks a value rule is 422.
 */
async function validated<T extends object>(dto: new () => T, body: object): Promise<T> {
  const instance = new dto();
  for (const member of Object.keys(body)) {
    (instance as Record<string, unknown>)[member] = (body as Record<string, unknown>)[member];
  }
  const errors = await validate(instance, { forbidUnknownValues: true });
  if (errors.length === 0) return instance;
  const malformed = errors.some((error) => error.constraints?.isString !== undefined);
  const problem = {
    type: malformed ? 'invalid-password-request' : 'validation-error',
    title: malformed ? 'Invalid password request' : 'Invalid values',
    detail: malformed
      ? 'One or more members are not of the expected type.'
      : 'One or more members break a rule of their value.',
    errors: errors.flatMap((error) =>
      Object.values(error.constraints ?? {}).map((message) => ({ field: error.property, message })),
    ),
  };
  throw malformed ? new BadRequestException(problem) : new UnprocessableEntityException(problem);
}
