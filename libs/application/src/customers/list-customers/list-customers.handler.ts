import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CustomerPage, ReadStore } from '@chronicle/read-models';
import { ListCustomersQuery } from './list-customers.query';

@QueryHandler(ListCustomersQuery)
export class ListCustomersHandler implements IQueryHandler<ListCustomersQuery, CustomerPage> {
  constructor(private readonly readStore: ReadStore) {}

  execute({ page, pageSize, gt, lt }: ListCustomersQuery): Promise<CustomerPage> {
    return this.readStore.listCustomers({ gt, lt, offset: (page - 1) * pageSize, limit: pageSize });
  }
}
