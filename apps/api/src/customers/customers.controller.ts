import { Controller, Get, Query, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiCredentials, ApiProblems, ApiQueryFrom } from '../http/openapi';
import type { FastifyReply } from 'fastify';
import { ListCustomersQuery } from '@chronicle/application';
import { CustomerDto } from './customer.dto';
import { pageHeaders, pageOf, pageQueryDescriptions, setPageHeaders } from '../http/paging';
import { ListCustomersQueryDto } from './list-customers.dto';

@ApiTags('customers')
@ApiCredentials()
@Controller('customers')
export class CustomersController {
  constructor(private readonly queries: QueryBus) {}

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
}
