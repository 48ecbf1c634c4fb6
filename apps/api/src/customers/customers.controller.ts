import { Controller, Get, Query, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiCredentials, ApiProblems, ApiQueryFrom } from '../http/openapi';
import type { FastifyReply } from 'fastify';
import { ListCustomersQuery } from '@chronicle/application';
import { CustomerDto } from './customer.dto';
import { DEFAULT_PAGE_SIZE, ListCustomersQueryDto, MAX_PAGE_SIZE } from './list-customers.dto';

@ApiTags('customers')
@ApiCredentials()
@Controller('customers')
export class CustomersController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @ApiOperation({ summary: 'List customers by id, paged, optionally within an exclusive id range' })
  @ApiQueryFrom(ListCustomersQueryDto, {
    page: 'Page to return, from 1; a page past the end is an empty list.',
    gt: 'Only customers whose id is greater than this (exclusive).',
    lt: 'Only customers whose id is less than this (exclusive).',
    maxpagesize: `Customers per page (default ${DEFAULT_PAGE_SIZE}); values above ${MAX_PAGE_SIZE} are lowered to ${MAX_PAGE_SIZE}.`,
  })
  @ApiOkResponse({
    type: [CustomerDto],
    description: 'One page of customers, sorted by id.',
    headers: {
      Link: {
        description: 'RFC 8288 links: rel="next" and rel="prev" pages, other parameters kept.',
        schema: { type: 'string' },
      },
      'X-Total-Count': {
        description: 'Customers matching gt and lt.',
        schema: { type: 'integer', minimum: 0 },
      },
    },
  })
  @ApiProblems(400, 401)
  async list(
    @Query() query: ListCustomersQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    const page = query.page ?? 1;
    const pageSize = Math.min(query.maxpagesize ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const result = await this.queries.execute(new ListCustomersQuery(page, pageSize, query.gt, query.lt));
    const links: string[] = [];
    if ((page - 1) * pageSize + result.count < result.total) links.push(pageLink(query, page + 1, 'next'));
    if (page > 1) links.push(pageLink(query, page - 1, 'prev'));
    if (links.length > 0) void reply.header('link', links.join(', '));
    void reply.header('x-total-count', String(result.total)).type('application/json; charset=utf-8');
    return result.json;
  }
}

/** The same query with another page (RFC 8288), keeping the client's other parameters. */
function pageLink(query: ListCustomersQueryDto, page: number, rel: 'next' | 'prev'): string {
  // Every parameter is an integer by now: nothing to percent-encode.
  let target = '/customers?';
  if (query.gt !== undefined) target += `gt=${query.gt}&`;
  if (query.lt !== undefined) target += `lt=${query.lt}&`;
  if (query.maxpagesize !== undefined) target += `maxpagesize=${query.maxpagesize}&`;
  return `<${target}page=${page}>; rel="${rel}"`;
}
