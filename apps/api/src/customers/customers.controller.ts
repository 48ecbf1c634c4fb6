import { Controller, Get, Query, Res, UsePipes } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBasicAuth, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { HotPathRoute } from '../http/hot-path';
import { queryValidationPipe } from '../http/validation';
import { CustomerDto } from './customer.dto';
import { customerPage } from './customer-page';
import { ListCustomersHotPath } from './list-customers.hot-path';
import { ListCustomersQueryDto } from './list-customers.dto';

@ApiTags('customers')
@ApiBearerAuth()
@ApiBasicAuth()
@Controller('customers')
export class CustomersController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @HotPathRoute(ListCustomersHotPath)
  @UsePipes(queryValidationPipe())
  @ApiOperation({ summary: 'List customers by id, paged, optionally within an exclusive id range' })
  @ApiOkResponse({
    type: [CustomerDto],
    description: 'Link (next, prev) and X-Total-Count headers page the list.',
  })
  list(
    @Query() query: ListCustomersQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    return customerPage(this.queries, query, reply);
  }
}
