import { Controller, Param, Patch, Req, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  ApiBasicAuth,
  ApiBearerAuth,
  ApiBody,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Principal } from '@chronicle/application';
import { CurrentPrincipal } from '@chronicle/auth';
import { HotPathRoute } from '../http/hot-path';
import { PatchUserHotPath } from './patch-user.hot-path';
import { patchUserResponse } from './patch-user.response';
import { UserDto, UserPatchDto } from './user.dto';
import { FRAGMENT_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE, USER_MEDIA_TYPE } from './user-representations';

@ApiTags('users')
@ApiBearerAuth()
@ApiBasicAuth()
@Controller('users')
export class UsersController {
  constructor(private readonly commands: CommandBus) {}

  @Patch(':userId')
  @HotPathRoute(PatchUserHotPath)
  @ApiOperation({ summary: 'Change a user with a JSON merge patch (RFC 7396) on name and age' })
  @ApiBody({ type: UserPatchDto, description: `Content-Type: ${MERGE_PATCH_MEDIA_TYPE}` })
  @ApiHeader({ name: 'If-Match', required: false, description: 'The ETag of the version being changed' })
  @ApiProduces(USER_MEDIA_TYPE, FRAGMENT_MEDIA_TYPE)
  @ApiOkResponse({ type: UserDto, description: 'The full user, or only the patched fields plus modifiedon.' })
  patch(
    @Param('userId') userId: string,
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    return patchUserResponse(this.commands, userId, principal, request, reply);
  }
}
