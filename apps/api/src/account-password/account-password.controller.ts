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
import { ApiAcceptedResponse, ApiBody, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { InvalidResetTokenError, passwordRefusal, WrongPasswordError } from '@chronicle/domain';
import {
  AccountSessions,
  Allow,
  AuthenticatedRequest,
  clientAddress,
  OptionalAuth,
  QUERY_TOKEN_PARAMETER,
  requireAuthentication,
} from '@chronicle/auth';
import { PASSWORD_FORMS, PasswordForm, passwordFormOf } from './account-password.dto';
import { Consumes, JSON_MEDIA_TYPE } from '../http/edge';
import { ApiProblems, RATE_LIMITED, refusal } from '../http/openapi';
import { bodyProblems, dtoSchemaOf } from '../http/validation';
import { WriteContext } from '../http/write-context.decorator';

@ApiTags('account')
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
    schema: { oneOf: Object.values(PASSWORD_FORMS).map(dtoSchemaOf) },
    examples: {
      request: { summary: 'Ask for a reset e-mail', value: { email: 'ada@example.com' } },
      completion: {
        summary: 'Complete a reset',
        value: { token: 'A'.repeat(64), new: 'a new long passphrase' },
      },
      change: {
        summary: 'Change it (authenticated)',
        value: { old: 'the current passphrase', new: 'a new long passphrase' },
      },
    },
  })
  @ApiAcceptedResponse({ description: 'Reset requested: an e-mail follows if the address has an account.' })
  @ApiNoContentResponse({ description: 'Password replaced.' })
  @ApiProblems(
    400,
    401,
    413,
    415,
    422,
    refusal(
      new InvalidResetTokenError(),
      'the reset token is unknown, expired or already used (one answer for every reason).',
    ),
    refusal(new WrongPasswordError(), '`old` is not the current password.'),
    refusal(requireAuthentication({}), '{old, new} was sent without credentials.'),
    refusal(passwordRefusal('new', 'common-password'), '`new` is one of the most common passwords.'),
    refusal(passwordRefusal('new', 'password-is-email'), "`new` is the account's e-mail address."),
    RATE_LIMITED,
  )
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
        const { email } = validated('request', body);
        await this.commands.execute(new RequestPasswordResetCommand(email, context));
        void reply.status(202);
        return;
      }
      case 'completion': {
        const completion = validated('completion', body);
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
        const change = validated('change', body);
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
 * The body as its form, checked against the form's schema. A member of the wrong JSON type is a
 * malformed request (400); a string that breaks a value rule is 422, except a token of no shape
 * of ours, which is answered as every other invalid token is.
 */
function validated<F extends PasswordForm>(form: F, body: unknown): InstanceType<(typeof PASSWORD_FORMS)[F]> {
  const problems = bodyProblems(PASSWORD_FORMS[form], body);
  if (problems === null) return body as InstanceType<(typeof PASSWORD_FORMS)[F]>;
  if (!problems.malformed && problems.errors.some((error) => error.field === 'token'))
    throw new InvalidResetTokenError();
  const problem = {
    type: problems.malformed ? 'invalid-password-request' : 'validation-error',
    title: problems.malformed ? 'Invalid password request' : 'Invalid values',
    detail: problems.malformed
      ? 'One or more members are not of the expected type.'
      : 'One or more members break a rule of their value.',
    errors: problems.errors,
  };
  throw problems.malformed ? new BadRequestException(problem) : new UnprocessableEntityException(problem);
}
