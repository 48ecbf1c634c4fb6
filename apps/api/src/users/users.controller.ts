import {
  BadRequestException,
  Body,
  Controller,
  Headers,
  NotAcceptableException,
  Param,
  Patch,
  Req,
  Res,
} from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PatchUserCommand, Principal } from '@chronicle/application';
import { CurrentPrincipal } from '@chronicle/auth';
import { Consumes, MERGE_PATCH_MEDIA_TYPE } from '../http/edge';
import { ApiCredentials, ApiProblems } from '../http/openapi';
import { UserDto, UserFragmentDto, UserPatchDto } from './user.dto';
import {
  etagOf,
  FRAGMENT_MEDIA_TYPE,
  fullUser,
  mediaTypeOf,
  negotiateUserRepresentation,
  parseIfMatch,
  SUPPORTED_MEDIA_TYPES,
  USER_MEDIA_TYPE,
  userFragment,
} from './user-representations';

@ApiTags('users')
@ApiCredentials()
@ApiExtraModels(UserDto)
@Controller('users')
export class UsersController {
  constructor(private readonly commands: CommandBus) {}

  @Patch(':userId')
  @Consumes(MERGE_PATCH_MEDIA_TYPE)
  @ApiOperation({ summary: 'Change a user with a JSON merge patch (RFC 7396) on name and age' })
  @ApiExtraModels(UserPatchDto, UserFragmentDto)
  @ApiConsumes(MERGE_PATCH_MEDIA_TYPE)
  @ApiBody({
    required: true,
    schema: { $ref: getSchemaPath(UserPatchDto) },
    examples: {
      age: { summary: 'Change the age', value: { age: 37 } },
      both: { value: { name: 'Ada', age: 36 } },
    },
  })
  @ApiHeader({ name: 'If-Match', required: false, description: 'The ETag of the version being changed' })
  @ApiOkResponse({
    description:
      'The full user (also for application/json, */* or no Accept), or only the patched members plus modifiedon.',
    content: {
      [USER_MEDIA_TYPE]: { schema: { $ref: getSchemaPath(UserDto) } },
      [FRAGMENT_MEDIA_TYPE]: { schema: { $ref: getSchemaPath(UserFragmentDto) } },
    },
    headers: {
      ETag: { description: "The user's version; send it as If-Match.", schema: { type: 'string' } },
      Vary: { description: 'Accept', schema: { type: 'string' } },
    },
  })
  @ApiProblems(400, 401, 403, 404, 406, 409, 412, 413, 415, 422)
  async patch(
    @Param('userId') userId: string,
    @Body() body: unknown,
    @Headers('accept') accept: string | undefined,
    @Headers('if-match') ifMatch: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    // Decided before anything changes: a request we cannot answer must change nothing.
    const representation = negotiateUserRepresentation(accept);
    if (!representation) {
      throw new NotAcceptableException({
        type: 'not-acceptable',
        title: 'Not Acceptable',
        detail: `None of the media types in Accept is offered. Supported: ${SUPPORTED_MEDIA_TYPES.join(', ')}.`,
        supported: SUPPORTED_MEDIA_TYPES,
      });
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new BadRequestException({
        type: 'invalid-patch',
        title: 'Invalid merge patch',
        detail: `The body must be a JSON object sent as ${MERGE_PATCH_MEDIA_TYPE}.`,
      });
    }
    const result = await this.commands.execute(
      new PatchUserCommand(
        userId,
        body as Record<string, unknown>,
        principal,
        { actor: principal.accountId, correlationId: request.id },
        parseIfMatch(ifMatch),
      ),
    );
    void reply
      .header('content-type', mediaTypeOf(representation))
      .header('etag', etagOf(result.revision))
      .header('vary', 'Accept');
    const representationBody =
      representation === 'user' ? fullUser(result.user) : userFragment(result.user, result.patched);
    // A Buffer, so that Fastify sends the media type exactly as negotiated (it adds a charset to strings).
    return Buffer.from(JSON.stringify(representationBody));
  }
}
