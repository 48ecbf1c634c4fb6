import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiExtraModels,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ChangeCustomerCommand,
  CommandContext,
  ConcurrencyConflictError,
  CustomerResult,
  EraseSubjectCommand,
  ExportPersonalDataQuery,
  GetCustomerQuery,
  ListCustomersQuery,
  PreconditionFailedError,
  RegisterCustomerCommand,
  SecurityEvents,
} from '@chronicle/application';
import { Allow, securityObservationOf } from '@chronicle/auth';
import {
  customerRepresentation,
  ErasedError,
  MAX_CUSTOMER_NUMBER,
  NotFoundError,
  parseCustomerNumber,
} from '@chronicle/domain';
import { Consumes, JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE } from '../http/edge';
import {
  etagHeader,
  etagOf,
  heldVersion,
  IF_MATCH_HEADER,
  IF_NONE_MATCH_HEADER,
  ifMatchRevisions,
} from '../http/entity-tags';
import { ApiCredentials, ApiProblems, ApiQueryFrom, refusal } from '../http/openapi';
import {
  AuthenticatedQueryDto,
  pageHeaders,
  pageOf,
  pageQueryDescriptions,
  setPageHeaders,
} from '../http/paging';
import { requireJsonObject } from '../http/validation';
import { WriteContext } from '../http/write-context.decorator';
import { ApiExportResponse, EXPORT_REPRESENTATIONS, sendExport } from '../personal-data/personal-data-export';
import { CustomerExportDto } from '../personal-data/personal-data-export.dto';
import { CUSTOMER_PATCH_SCHEMA, CustomerDto, NEW_CUSTOMER_SCHEMA } from './customer.dto';
import { ListCustomersQueryDto } from './list-customers.dto';

const ETAG_HEADER = etagHeader('customer');
/** The numbers parseCustomerNumber takes, as the document states them. */
const CUSTOMER_ID = {
  name: 'id',
  description: "The customer's number.",
  schema: { type: 'integer', minimum: 1, maximum: MAX_CUSTOMER_NUMBER },
};
const UNKNOWN_CUSTOMER = refusal(new NotFoundError('Customer'), 'no customer has this number.');
const ERASED_CUSTOMER = refusal(
  new ErasedError('Customer', '2026-11-27T00:00:00.000Z'),
  'the customer was erased (DELETE /customers/{id}); nothing about it is kept readable.',
);

@ApiTags('customers')
@ApiCredentials()
@ApiExtraModels(CustomerDto)
@Controller('customers')
export class CustomersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly security: SecurityEvents,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'List customers by id, paged, optionally within an exclusive id range (users and admins)',
  })
  @ApiQueryFrom(ListCustomersQueryDto, {
    ...pageQueryDescriptions('Customers'),
    gt: 'Only customers whose id is greater than this (exclusive).',
    lt: 'Only customers whose id is less than this (exclusive).',
  })
  @ApiOkResponse({
    type: [CustomerDto],
    description: 'One page of customers, sorted by id.',
    headers: pageHeaders('Customers matching gt and lt'),
  })
  @ApiProblems(400, 401, 403)
  async list(
    @Query() query: ListCustomersQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    const { page, pageSize } = pageOf(query);
    const result = await this.queries.execute(new ListCustomersQuery(page, pageSize, query.gt, query.lt));
    setPageHeaders(reply, '/customers', query, result);
    void reply.type('application/json; charset=utf-8');
    return result.json;
  }

  @Post()
  @Allow()
  @Consumes(JSON_MEDIA_TYPE)
  @HttpCode(201)
  @ApiOperation({ summary: 'Register a customer under the next customer number (admin)' })
  @ApiBody({
    required: true,
    schema: NEW_CUSTOMER_SCHEMA,
    examples: { customer: { value: { name: 'Ada Lovelace', email: 'ada@example.com' } } },
  })
  @ApiCreatedResponse({
    type: CustomerDto,
    description: 'The customer registered.',
    headers: {
      Location: { description: 'The new customer: /customers/{id}.', schema: { type: 'string' } },
      ETag: ETAG_HEADER,
    },
  })
  @ApiProblems(400, 401, 403, 413, 415, 422)
  async create(
    @Body() body: unknown,
    @WriteContext() context: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    const result = await this.commands.execute(
      new RegisterCustomerCommand(requireJsonObject(body, JSON_MEDIA_TYPE), context),
    );
    void reply.header('location', `/customers/${result.customer.id}`);
    return sendRecord(reply, result);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Read a customer, reflecting every write answered before the request (users and admins)',
  })
  @ApiParam(CUSTOMER_ID)
  @ApiHeader(IF_NONE_MATCH_HEADER)
  @ApiOkResponse({ type: CustomerDto, description: 'The customer record.', headers: { ETag: ETAG_HEADER } })
  @ApiNotModifiedResponse({
    description: 'If-None-Match names the current version.',
    headers: { ETag: ETAG_HEADER },
  })
  @ApiProblems(400, 401, 403, UNKNOWN_CUSTOMER, ERASED_CUSTOMER)
  async get(
    @Param('id') id: string,
    // No parameters but the credential: an unknown one is a 400, as on every route that reads.
    @Query() _query: AuthenticatedQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const result = await this.queries.execute(new GetCustomerQuery(customerIdOf(id)));
    // Sent here, not returned: Nest would set 200 over a 304.
    if (heldVersion(ifNoneMatch, result.revision)) {
      await reply.header('etag', etagOf(result.revision)).code(304).send();
      return;
    }
    await reply.send(sendRecord(reply, result));
  }

  @Delete(':id')
  @Allow()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Erase a customer: every personal value held about them (admin)',
    description:
      "The customer's data key is destroyed: their name and address can no longer be read anywhere the service " +
      'keeps data, and they leave the list and its count. The history keeps its events (the chain still ' +
      'verifies), with the personal values null. Erasing again changes nothing. ' +
      '`npm run cli -- erase --customer ID` does the same.',
  })
  @ApiParam(CUSTOMER_ID)
  @ApiNoContentResponse({ description: 'Erased (or erased before).' })
  @ApiProblems(400, 401, 403, UNKNOWN_CUSTOMER)
  async erase(
    @Param('id') id: string,
    @Query() _query: AuthenticatedQueryDto,
    @WriteContext() context: CommandContext,
  ): Promise<void> {
    await this.commands.execute(new EraseSubjectCommand('customer', String(customerIdOf(id)), context));
  }

  @Get(':id/export')
  @Allow()
  @ApiOperation({
    summary: "Export a customer's data (GDPR articles 15 and 20) (admin)",
    description:
      "The customer's name and e-mail address with their history of changes, and the audit records of its " +
      'stream, built from the event history.',
  })
  @ApiParam(CUSTOMER_ID)
  @ApiExportResponse(CustomerExportDto, "The customer's data")
  @ApiProblems(400, 401, 403, 406, UNKNOWN_CUSTOMER, ERASED_CUSTOMER)
  async export(
    @Param('id') id: string,
    // No parameters but the credential: an unknown one is a 400, as on every route that reads.
    @Query() _query: AuthenticatedQueryDto,
    @Headers('accept') accept: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    EXPORT_REPRESENTATIONS.choose(accept);
    const document = await this.queries.execute(
      new ExportPersonalDataQuery({ kind: 'customer', id: customerIdOf(id) }, null),
    );
    // The export holds audit records: read like the audit, and counted with its reads.
    this.security.observe('AuditRead.v1', securityObservationOf(request));
    return sendExport(reply, document);
  }

  @Patch(':id')
  @Allow()
  @Consumes(MERGE_PATCH_MEDIA_TYPE)
  @ApiOperation({ summary: 'Change a customer with a JSON merge patch (RFC 7396) on name and email (admin)' })
  @ApiParam(CUSTOMER_ID)
  @ApiConsumes(MERGE_PATCH_MEDIA_TYPE)
  @ApiBody({
    required: true,
    schema: CUSTOMER_PATCH_SCHEMA,
    examples: { email: { summary: 'Change the e-mail address', value: { email: 'ada@analytical.example' } } },
  })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiOkResponse({
    type: CustomerDto,
    description: 'The customer as changed.',
    headers: { ETag: ETAG_HEADER },
  })
  @ApiProblems(
    400,
    401,
    403,
    413,
    415,
    422,
    UNKNOWN_CUSTOMER,
    ERASED_CUSTOMER,
    refusal(
      new PreconditionFailedError(1),
      "If-Match names a version other than the customer's current one.",
    ),
    refusal(new ConcurrencyConflictError('customer'), 'the customer kept changing under concurrent writes.'),
  )
  async patch(
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @WriteContext() context: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    const customerId = customerIdOf(id);
    const result = await this.commands.execute(
      new ChangeCustomerCommand(
        customerId,
        requireJsonObject(body, MERGE_PATCH_MEDIA_TYPE),
        context,
        ifMatchRevisions(ifMatch),
      ),
    );
    return sendRecord(reply, result);
  }
}

/** The customer a path names; anything but a customer number names none (404). */
function customerIdOf(segment: string): number {
  const customerId = parseCustomerNumber(segment);
  if (customerId === undefined) throw new NotFoundError('Customer');
  return customerId;
}

/** The record as JSON with its version: the answer of every route that names one customer. */
function sendRecord(reply: FastifyReply, { customer, revision }: CustomerResult): Buffer {
  void reply.type('application/json; charset=utf-8').header('etag', etagOf(revision));
  return Buffer.from(JSON.stringify(customerRepresentation(customer)));
}
