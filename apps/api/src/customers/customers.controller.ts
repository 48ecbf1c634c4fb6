import { Controller, Get, Query, Res, UsePipes } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBasicAuth, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RouteSchema } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { ListCustomersQuery } from '@chronicle/application';
import { CustomerDocument } from '@chronicle/read-models';
import { queryValidationPipe } from '../http/validation';
import { CUSTOMER_PAGE_SCHEMA, CustomerDto } from './customer.dto';
import { DEFAULT_PAGE_SIZE, ListCustomersQueryDto, MAX_PAGE_SIZE } from './list-customers.dto';

@ApiTags('customers')
@ApiBearerAuth()
@ApiBasicAuth()
@Controller('customers')
export class CustomersController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @RouteSchema({ response: { 200: CUSTOMER_PAGE_SCHEMA } })
  @UsePipes(queryValidationPipe())
  @ApiOperation({ summary: 'List customers by id, paged, optionally within an exclusive id range' })
  @ApiOkResponse({
    type: [CustomerDto],
    description: 'Link (next, prev) and X-Total-Count headers page the list.',
  })
  async list(
    @Query() query: ListCustomersQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CustomerDocument[]> {
    const page = query.page ?? 1;
    const pageSize = Math.min(query.maxpagesize ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const result = await this.queries.execute(new ListCustomersQuery(page, pageSize, query.gt, query.lt));
    const links: string[] = [];
    if ((page - 1) * pageSize + result.items.length < result.total)
      links.push(pageLink(query, page + 1, 'next'));
    if (page > 1) links.push(pageLink(query, page - 1, 'prev'));
    if (links.length > 0) void reply.header('link', links.join(', '));
    void reply.header('x-total-count', String(result.total));
    return result.items;
  }
}

/** The same query with another page (RFC 8288), keeping the client's other parameters. */
function pageLink(query: ListCustomersQueryDto, page: number, rel: 'next' | 'prev'): string {
  const params = new URLSearchParams();
  for (const name of ['gt', 'lt', 'maxpagesize'] as const) {
    if (query[name] !== undefined) params.set(name, String(query[name]));
  }
  params.set('page', String(page));
  return `</customers?${params.toString()}>; rel="${rel}"`;
}
