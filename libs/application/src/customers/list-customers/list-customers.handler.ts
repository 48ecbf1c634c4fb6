import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CustomerPageJson, ReadStore } from '@chronicle/read-models';
import { pageOffset } from '../../shared/paging';
import { ListCustomersQuery } from './list-customers.query';

@QueryHandler(ListCustomersQuery)
export class ListCustomersHandler implements IQueryHandler<ListCustomersQuery, CustomerPageJson> {
  constructor(private readonly readStore: ReadStore) {}

  execute({ page, pageSize, gt, lt }: ListCustomersQuery): Promise<CustomerPageJson> {
    return this.readStore.listCustomersJson({ gt, lt, offset: pageOffset(page, pageSize), limit: pageSize });
  }
}
