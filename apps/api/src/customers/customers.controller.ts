import { Controller, Get, Query, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBasicAuth, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ListCustomersQuery } from '@chronicle/application';
import { CustomerDto } from './customer.dto';
import { CustomerListParameters, customerListParameters, ListCustomersQueryDto } from './list-customers.dto';

@ApiTags('customers')
@ApiBearerAuth()
@ApiBasicAuth()
@Controller('customers')
export class CustomersController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @ApiOperation({ summary: 'List customers by id, paged, optionally within an exclusive id range' })
  @ApiOkResponse({
    type: [CustomerDto],
    description: 'Link (next, prev) and X-Total-Count headers page the list.',
  })
  async list(
    @Query() query: ListCustomersQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    const parameters = customerListParameters(query);
    const { page, pageSize, gt, lt } = parameters;
    const result = await this.queries.execute(new ListCustomersQuery(page, pageSize, gt, lt));
    const links: string[] = [];
    if ((page - 1) * pageSize + result.count < result.total)
      links.push(pageLink(parameters, page + 1, 'next'));
    if (page > 1) links.push(pageLink(parameters, page - 1, 'prev'));
    if (links.length > 0) void reply.header('link', links.join(', '));
    void reply.header('x-total-count', String(result.total)).type('application/json; charset=utf-8');
    return result.json;
  }
}

/** The same query with another page (RFC 8288), keeping the client's other parameters. */
function pageLink(query: CustomerListParameters, page: number, rel: 'next' | 'prev'): string {
  // Every parameter is an integer by now: nothing to percent-encode.
  let target = '/customers?';
  if (query.gt !== undefined) target += `gt=${query.gt}&`;
  if (query.lt !== undefined) target += `lt=${query.lt}&`;
  if (query.maxpagesize !== undefined) target += `maxpagesize=${query.maxpagesize}&`;
  return `<${target}page=${page}>; rel="${rel}"`;
}
