import { Controller, Get, Headers, Query, Req, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiCredentials, ApiProblems, ApiQueryFrom } from '../http/openapi';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AUDIT_CSV_HEADER,
  AUDIT_CSV_MEDIA_TYPE,
  auditCsvLine,
  AuditRecord,
  DEFAULT_AUDIT_LIMIT,
  ListAuditEventsQuery,
  SecurityEvents,
} from '@chronicle/application';
import { Allow, securityObservationOf } from '@chronicle/auth';
import { formatPosition, Position } from '@chronicle/event-store';
import { AuditRecordDto, AuthProvenanceDto, ListAuditEventsQueryDto } from './list-audit-events.dto';
import { auditAfter, auditTimeParameter, INVALID_POSITION, rethrowInvalidAfter } from './audit-position';
import { RepresentationOffers } from '../http/representation-offers';

const PATH = '/api/v1/audit/events';

/** JSON by default (for application/json, any type, or no Accept), CSV for text/csv; else 406. */
const AUDIT_REPRESENTATIONS = new RepresentationOffers<'json' | 'csv'>([
  ['application/json', 'json'],
  [AUDIT_CSV_MEDIA_TYPE, 'csv'],
]);

@ApiTags('audit')
@ApiExtraModels(AuthProvenanceDto)
@ApiCredentials()
@Controller(PATH.slice(1))
@Allow('auditor')
export class AuditController {
  constructor(
    private readonly queries: QueryBus,
    private readonly security: SecurityEvents,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The event history, oldest first, secrets redacted (admin or auditor)' })
  @ApiQueryFrom(ListAuditEventsQueryDto, {
    stream: 'Only this stream, e.g. `user-<id>`.',
    type: 'Only this event type, e.g. `UserPatched.v1`; repeat it for any of several (at most 20).',
    actor: 'Only events caused by this account id, or `system`.',
    correlationId: 'Only events of the work this correlation id names.',
    since: 'Only events recorded at or after this RFC 3339 time (`recordedAt`).',
    until: 'Only events recorded before this RFC 3339 time (`recordedAt`).',
    after: 'Only events after this position (exclusive), e.g. from a next link.',
    limit: `At most this many records (default ${DEFAULT_AUDIT_LIMIT}).`,
  })
  @ApiExtraModels(AuditRecordDto)
  @ApiOkResponse({
    description:
      'The history, oldest first: JSON, or CSV (RFC 4180, a header line, CRLF; a cell that a spreadsheet ' +
      "would run as a formula starts with ') for Accept: text/csv.",
    content: {
      'application/json': { schema: { type: 'array', items: { $ref: getSchemaPath(AuditRecordDto) } } },
      [AUDIT_CSV_MEDIA_TYPE]: { schema: { type: 'string' } },
    },
    headers: {
      Link: {
        description:
          'rel="next": the same filters from the next position; given only when more records may follow a full page.',
        schema: { type: 'string' },
      },
    },
  })
  @ApiProblems(400, 401, 403, 406, INVALID_POSITION)
  async list(
    @Query() query: ListAuditEventsQueryDto,
    @Headers('accept') accept: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AuditRecord[] | string> {
    // Decided before anything is read: a type we cannot produce is a 406, never JSON with a 200.
    const representation = AUDIT_REPRESENTATIONS.choose(accept);
    // Who reads the history is part of it: counted like every security event.
    this.security.observe('AuditRead.v1', securityObservationOf(request));
    const limit = query.limit ?? DEFAULT_AUDIT_LIMIT;
    // The DTO has checked the shape; auditAfter applies the event store's position rule.
    const after = query.after === undefined ? undefined : auditAfter(query.after);
    const filter = {
      stream: query.stream,
      types: query.type === undefined ? undefined : ([] as string[]).concat(query.type),
      actor: query.actor,
      correlationId: query.correlationId,
      since: query.since === undefined ? undefined : auditTimeParameter('since', query.since),
      until: query.until === undefined ? undefined : auditTimeParameter('until', query.until),
      after,
    };
    const page = await this.queries
      .execute(new ListAuditEventsQuery(filter, limit))
      .catch(rethrowInvalidAfter);
    if (page.next) void reply.header('link', `<${nextPage(query, limit, page.next)}>; rel="next"`);
    if (representation === 'json') return page.records;
    void reply.type(`${AUDIT_CSV_MEDIA_TYPE}; charset=utf-8; header=present`);
    return AUDIT_CSV_HEADER + page.records.map(auditCsvLine).join('');
  }
}

/** The same filters from the next position on (RFC 8288); the credential never goes into a link. */
function nextPage(query: ListAuditEventsQueryDto, limit: number, next: Position): string {
  const params = new URLSearchParams();
  for (const name of ['stream', 'actor', 'correlationId', 'since', 'until'] as const) {
    if (query[name] !== undefined) params.set(name, query[name]);
  }
  for (const type of query.type === undefined ? [] : ([] as string[]).concat(query.type))
    params.append('type', type);
  params.set('after', formatPosition(next));
  params.set('limit', String(limit));
  return `${PATH}?${params.toString()}`;
}
