import { Controller, Get, Headers, Query, Req, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiCredentials, ApiProblems, ApiQueryFrom, refusal } from '../http/openapi';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AUDIT_CSV_HEADER,
  AUDIT_CSV_MEDIA_TYPE,
  auditCsvLine,
  AuditRecord,
  DEFAULT_AUDIT_LIMIT,
  ListAuditEventsQuery,
  parseSeal,
  SecurityEvents,
  VerifyHistoryQuery,
} from '@chronicle/application';
import { Allow, securityObservationOf } from '@chronicle/auth';
import { formatPosition, Position } from '@chronicle/event-store';
import {
  AuditRecordDto,
  AuthProvenanceDto,
  ChainVerificationDto,
  HistoryHeadDto,
  ListAuditEventsQueryDto,
  VerifyAuditQueryDto,
} from './list-audit-events.dto';
import { auditAfter, auditTimeParameter, INVALID_POSITION, rethrowInvalidAfter } from './audit-position';
import { CHAIN_BROKEN_HEADER, HistoryChainWatch } from './history-chain-watch.service';
import { invalidParameters } from '../http/validation';
import { RepresentationOffers } from '../http/representation-offers';

const BASE = '/api/v1/audit';
const PATH = `${BASE}/events`;

const CHAIN_BROKEN_HEADER_DOC = {
  description:
    "Only when the history's hash chain is broken: the first broken position the server knows of " +
    '(GET /api/v1/audit/verify walks the whole chain).',
  schema: { type: 'string' },
};

/** JSON by default (for application/json, any type, or no Accept), CSV for text/csv; else 406. */
const AUDIT_REPRESENTATIONS = new RepresentationOffers<'json' | 'csv'>([
  ['application/json', 'json'],
  [AUDIT_CSV_MEDIA_TYPE, 'csv'],
]);

/** The 400 of a `seal` that is not the JSON of a seal. */
const invalidSeal = () =>
  invalidParameters([
    { field: 'seal', message: 'seal must be the JSON of a seal { position, hash, recordedAt, signature }' },
  ]);

/** The document's word on it: a string parameter's JSON content is beyond what its schema checks. */
const INVALID_SEAL = refusal(
  invalidSeal(),
  'seal is not the JSON text of a seal { position, hash, recordedAt, signature }.',
);

@ApiTags('audit')
@ApiExtraModels(AuthProvenanceDto)
@ApiCredentials()
@Controller(BASE.slice(1))
@Allow('auditor')
export class AuditController {
  constructor(
    private readonly queries: QueryBus,
    private readonly security: SecurityEvents,
    private readonly chain: HistoryChainWatch,
  ) {}

  @Get('events')
  @ApiOperation({ summary: 'The event history, oldest first, secrets redacted (admin or auditor)' })
  @ApiQueryFrom(ListAuditEventsQueryDto, {
    stream: 'Only this stream, e.g. `user-<id>`.',
    type: 'Only this event type, e.g. `UserPatched.v1`; repeat it for any of several (at most 20).',
    actor: 'Only events caused by this account id, or `system`.',
    correlationId: 'Only events of the work this correlation id names.',
    since: 'Only events recorded at or after this RFC 3339 time (`recordedAt`).',
    until: 'Only events recorded before this RFC 3339 time (`recordedAt`).',
    after: 'Only events after this position (exclusive), e.g. from a next link.',
    withChain: 'true: each record also carries `chained`, the text its hash is the SHA-256 of.',
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
      [CHAIN_BROKEN_HEADER]: CHAIN_BROKEN_HEADER_DOC,
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
      withChain: query.withChain === 'true',
    };
    const page = await this.queries
      .execute(new ListAuditEventsQuery(filter, limit))
      .catch(rethrowInvalidAfter);
    if (page.broken !== null) this.chain.report(page.broken);
    this.markBroken(reply);
    if (page.next) void reply.header('link', `<${nextPage(query, limit, page.next)}>; rel="next"`);
    if (representation === 'json') return page.records;
    void reply.type(`${AUDIT_CSV_MEDIA_TYPE}; charset=utf-8; header=present`);
    return AUDIT_CSV_HEADER + page.records.map(auditCsvLine).join('');
  }

  @Get('verify')
  @ApiExtraModels(HistoryHeadDto)
  @ApiOperation({
    summary: "Walk the history's hash chain, and check a kept seal against it (admin or auditor)",
  })
  @ApiQueryFrom(VerifyAuditQueryDto, {
    seal: 'A seal kept from `chronicle audit seal`: its JSON text `{ position, hash, recordedAt, signature }`.',
  })
  @ApiOkResponse({
    type: ChainVerificationDto,
    description: 'Whether the chain holds (and the seal, when given); `firstBroken` names where it breaks.',
    headers: { [CHAIN_BROKEN_HEADER]: CHAIN_BROKEN_HEADER_DOC },
  })
  @ApiProblems(401, 403, INVALID_SEAL)
  async verify(
    @Query() query: VerifyAuditQueryDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChainVerificationDto> {
    const seal = query.seal === undefined ? null : sealParameter(query.seal);
    this.security.observe('AuditRead.v1', securityObservationOf(request));
    const result = await this.queries.execute(new VerifyHistoryQuery(seal));
    if (result.broken !== null) this.chain.report(result.broken);
    this.markBroken(reply);
    return {
      ok: result.ok,
      checked: result.events,
      head: result.head,
      ...(result.broken === null ? {} : { firstBroken: result.broken }),
      ...(result.seal === undefined ? {} : { seal: result.seal }),
    };
  }

  /** The header on every audit answer once the server knows the chain breaks. */
  private markBroken(reply: FastifyReply): void {
    const { firstBroken } = this.chain.status();
    if (firstBroken !== null) void reply.header(CHAIN_BROKEN_HEADER, firstBroken.position);
  }
}

/** The same filters from the next position on (RFC 8288); the credential never goes into a link. */
function nextPage(query: ListAuditEventsQueryDto, limit: number, next: Position): string {
  const params = new URLSearchParams();
  for (const name of ['stream', 'actor', 'correlationId', 'since', 'until', 'withChain'] as const) {
    if (query[name] !== undefined) params.set(name, query[name]);
  }
  for (const type of query.type === undefined ? [] : ([] as string[]).concat(query.type))
    params.append('type', type);
  params.set('after', formatPosition(next));
  params.set('limit', String(limit));
  return `${PATH}?${params.toString()}`;
}

/** The `seal` parameter as a seal, or a 400 naming it. */
function sealParameter(text: string) {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the same 400 as JSON that is not a seal.
  }
  const seal = parseSeal(parsed);
  if (seal === null) throw invalidSeal();
  return seal;
}
