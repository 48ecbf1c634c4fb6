import { Controller, Get, Query, Res, UseGuards } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiCredentials, ApiProblems, ApiQueryFrom } from '../http/openapi';
import type { FastifyReply } from 'fastify';
import { AuditRecord, DEFAULT_AUDIT_LIMIT, ListAuditEventsQuery } from '@chronicle/application';
import { formatPosition, Position } from '@chronicle/event-store';
import { AdminGuard } from '../admin/admin.guard';
import { AuditRecordDto, ListAuditEventsQueryDto } from './list-audit-events.dto';
import { auditAfter, auditTimeParameter, rethrowInvalidAfter } from './audit-position';

const PATH = '/api/v1/audit/events';

@ApiTags('audit')
@ApiCredentials()
@Controller(PATH.slice(1))
@UseGuards(AdminGuard)
export class AuditController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @ApiOperation({ summary: 'The event history, oldest first, secrets redacted (admin)' })
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
  @ApiOkResponse({
    type: [AuditRecordDto],
    description: 'The history, oldest first.',
    headers: {
      Link: {
        description:
          'rel="next": the same filters from the next position; given only when more records may follow a full page.',
        schema: { type: 'string' },
      },
    },
  })
  @ApiProblems(400, 401, 403)
  async list(
    @Query() query: ListAuditEventsQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AuditRecord[]> {
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
    return page.records;
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
