import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Patch,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AsOf,
  CommandContext,
  ConcurrencyConflictError,
  EraseSubjectCommand,
  ExportPersonalDataQuery,
  GetUserQuery,
  ListUsersQuery,
  parseAsOf,
  PatchUserCommand,
  PreconditionFailedError,
  Principal,
  RFC_3339,
  SecurityEvents,
} from '@chronicle/application';
import { Allow, CurrentPrincipal, securityObservationOf } from '@chronicle/auth';
import { ErasedError, NotFoundError, userRepresentation } from '@chronicle/domain';
import { Consumes, MERGE_PATCH_MEDIA_TYPE } from '../http/edge';
import { ApiCredentials, ApiProblems, ApiQueryFrom, refusal } from '../http/openapi';
import { WriteContext } from '../http/write-context.decorator';
import {
  AuthenticatedQueryDto,
  pageHeaders,
  pageOf,
  PageQueryDto,
  pageQueryDescriptions,
  setPageHeaders,
} from '../http/paging';
import { ApiExportResponse, EXPORT_REPRESENTATIONS, sendExport } from '../personal-data/personal-data-export';
import { UserExportDto } from '../personal-data/personal-data-export.dto';
import {
  AS_OF_MESSAGE,
  GetUserQueryDto,
  USER_ID_SCHEMA,
  USER_PATCH_SCHEMA,
  UserDto,
  UserFragmentDto,
} from './user.dto';
import { INVALID_POSITION, invalidPosition } from '../audit/audit-position';
import { invalidParameters, requireJsonObject } from '../http/validation';
import {
  etagHeader,
  etagOf,
  heldVersion,
  IF_MATCH_HEADER,
  IF_NONE_MATCH_HEADER,
  ifMatchRevisions,
} from '../http/entity-tags';
import {
  FRAGMENT_MEDIA_TYPE,
  GET_REPRESENTATIONS,
  mediaTypeOf,
  PATCH_REPRESENTATIONS,
  representationBody,
  USER_MEDIA_TYPE,
} from './user-representations';

const ETAG_HEADER = etagHeader('user');
const VARY_HEADER = { description: 'Accept', schema: { type: 'string' } };

const UNKNOWN_USER = refusal(
  new NotFoundError('User'),
  'no user has this id (with asOf: the user did not exist then).',
);

/** A user erased before: every read or change of it answers 410. */
export const ERASED_USER = refusal(
  new ErasedError('User', '2026-11-27T00:00:00.000Z'),
  'the user was erased (DELETE /users/{userId}); nothing about it is kept readable.',
);

/** A user's path: its id. */
const ApiUserId = () => ApiParam({ name: 'userId', schema: USER_ID_SCHEMA });

@ApiTags('users')
@ApiCredentials()
@ApiExtraModels(UserDto)
@Controller('users')
export class UsersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly security: SecurityEvents,
  ) {}

  @Get()
  @Allow()
  @ApiOperation({
    summary: 'List users by createdon, then id, paged (admin)',
    description: "Served from the users read model: eventually consistent, its lag the projections status's.",
  })
  @ApiQueryFrom(PageQueryDto, pageQueryDescriptions('Users'))
  @ApiOkResponse({ type: [UserDto], description: 'One page of users.', headers: pageHeaders('Users') })
  @ApiProblems(400, 401, 403)
  async list(@Query() query: PageQueryDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    const { page, pageSize } = pageOf(query);
    const result = await this.queries.execute(new ListUsersQuery(page, pageSize));
    setPageHeaders(reply, '/users', query, { count: result.items.length, total: result.total });
    void reply.type('application/json; charset=utf-8');
    return Buffer.from(JSON.stringify(result.items.map(userRepresentation)));
  }

  @Get(':userId')
  // An auditor reads users only as they were (asOf); the handler holds that rule.
  @Allow('user', 'auditor')
  @ApiOperation({
    summary: 'Read a user: the full representation, reflecting every write answered before the request',
    description:
      'A user reads its own user, an admin any. With asOf (admin or auditor): the user as it was then, ' +
      'folded from its history by the users projection.',
  })
  @ApiHeader(IF_NONE_MATCH_HEADER)
  @ApiQueryFrom(GetUserQueryDto, {
    asOf:
      'The user as it was at this RFC 3339 time or global position (inclusive), folded from its history ' +
      '(admin or auditor); 404 if it did not exist then.',
  })
  @ApiOkResponse({
    description: 'The full user (also for application/json, */* or no Accept).',
    content: { [USER_MEDIA_TYPE]: { schema: { $ref: getSchemaPath(UserDto) } } },
    headers: { ETag: ETAG_HEADER, Vary: VARY_HEADER },
  })
  @ApiNotModifiedResponse({
    description: 'If-None-Match names the current version.',
    headers: { ETag: ETAG_HEADER, Vary: VARY_HEADER },
  })
  @ApiUserId()
  @ApiProblems(400, 401, 403, 406, UNKNOWN_USER, ERASED_USER, INVALID_POSITION)
  async get(
    @Param('userId') userId: string,
    @Query() query: GetUserQueryDto,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const representation = GET_REPRESENTATIONS.choose(accept);
    const asOf = asOfOf(query);
    const user = await this.queries.execute(new GetUserQuery(userId, principal, asOf));
    // A past state is read from the history: counted with the audit's reads.
    if (asOf !== undefined) this.security.observe('AuditRead.v1', securityObservationOf(request));
    void reply.header('etag', etagOf(user.revision)).header('vary', 'Accept');
    // Sent here, not returned: Nest would set 200 over a 304.
    if (heldVersion(ifNoneMatch, user.revision)) {
      await reply.code(304).send();
      return;
    }
    await reply
      .header('content-type', mediaTypeOf(representation))
      .send(representationBody(representation, user));
  }

  @Delete(':userId')
  @Allow()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Erase a person: the user with its account, and every personal value held about them (admin)',
    description:
      "The person's data key is destroyed: their name, age and address can no longer be read anywhere the " +
      'service keeps data, their tokens stop working on every instance within a second, and their address may ' +
      'be taken by a new account. The history keeps its events (the chain still verifies), with the personal ' +
      'values null. Erasing again changes nothing. `npm run cli -- erase --user ID` does the same.',
  })
  @ApiUserId()
  @ApiNoContentResponse({ description: 'Erased (or erased before).' })
  @ApiProblems(400, 401, 403, UNKNOWN_USER)
  async erase(
    @Param('userId') userId: string,
    @Query() _query: AuthenticatedQueryDto,
    @WriteContext() context: CommandContext,
  ): Promise<void> {
    await this.commands.execute(new EraseSubjectCommand('user', userId, context));
  }

  @Get(':userId/export')
  // As GET /users/{id}: the handler holds who may read which user.
  @Allow('user', 'auditor')
  @ApiOperation({
    summary: "Export a person's data (GDPR articles 15 and 20): their own, or anyone's for an admin",
    description:
      'Every personal value held about the user and its account with its history of changes, the sessions, ' +
      "the e-mails sent and the audit records of the person's streams, built from the event history.",
  })
  @ApiExportResponse(UserExportDto, "The person's data")
  @ApiUserId()
  @ApiProblems(400, 401, 403, 406, UNKNOWN_USER, ERASED_USER)
  async export(
    @Param('userId') userId: string,
    // No parameters but the credential: an unknown one is a 400, as on every route that reads.
    @Query() _query: AuthenticatedQueryDto,
    @Headers('accept') accept: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    EXPORT_REPRESENTATIONS.choose(accept);
    const document = await this.queries.execute(
      new ExportPersonalDataQuery({ kind: 'user', id: userId }, principal),
    );
    // The export holds audit records: read like the audit, and counted with its reads.
    this.security.observe('AuditRead.v1', securityObservationOf(request));
    return sendExport(reply, document);
  }

  @Patch(':userId')
  @Consumes(MERGE_PATCH_MEDIA_TYPE)
  @ApiOperation({ summary: 'Change a user with a JSON merge patch (RFC 7396) on name and age' })
  @ApiExtraModels(UserFragmentDto)
  @ApiConsumes(MERGE_PATCH_MEDIA_TYPE)
  @ApiBody({
    required: true,
    schema: USER_PATCH_SCHEMA,
    examples: {
      age: { summary: 'Change the age', value: { age: 37 } },
      both: { value: { name: 'Ada', age: 36 } },
    },
  })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiOkResponse({
    description:
      'The full user (also for application/json, */* or no Accept), or only the patched members plus modifiedon.',
    content: {
      [USER_MEDIA_TYPE]: { schema: { $ref: getSchemaPath(UserDto) } },
      [FRAGMENT_MEDIA_TYPE]: { schema: { $ref: getSchemaPath(UserFragmentDto) } },
    },
    headers: {
      ETag: ETAG_HEADER,
      Vary: VARY_HEADER,
    },
  })
  @ApiUserId()
  @ApiProblems(
    400,
    401,
    403,
    406,
    413,
    415,
    422,
    UNKNOWN_USER,
    ERASED_USER,
    refusal(new PreconditionFailedError(1), "If-Match names a version other than the user's current one."),
    refusal(new ConcurrencyConflictError('user'), 'the user kept changing under concurrent writes.'),
  )
  async patch(
    @Param('userId') userId: string,
    @Body() body: unknown,
    @Headers('accept') accept: string | undefined,
    @Headers('if-match') ifMatch: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @WriteContext() context: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    // Decided before anything changes: a request we cannot answer must change nothing.
    const representation = PATCH_REPRESENTATIONS.choose(accept);
    const result = await this.commands.execute(
      new PatchUserCommand(
        userId,
        requireJsonObject(body, MERGE_PATCH_MEDIA_TYPE),
        principal,
        context,
        ifMatchRevisions(ifMatch),
      ),
    );
    void reply
      .header('content-type', mediaTypeOf(representation))
      .header('etag', etagOf(result.revision))
      .header('vary', 'Accept');
    return representationBody(representation, result.user, result.patched);
  }
}

/** The moment `asOf` names; the DTO has checked its shape and calendar, parseAsOf the log's rule. */
function asOfOf(query: GetUserQueryDto): AsOf | undefined {
  if (query.asOf === undefined) return undefined;
  const asOf = parseAsOf(query.asOf);
  if (asOf === null) {
    // A time the schema let through cannot fail here; a position can (its prepare after its commit).
    throw RFC_3339.test(query.asOf)
      ? invalidParameters([{ field: 'asOf', message: AS_OF_MESSAGE }])
      : invalidPosition('asOf', AS_OF_MESSAGE);
  }
  return asOf;
}
