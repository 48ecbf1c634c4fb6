import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CustomerPageJson, ReadStore } from '@chronicle/read-models';
import { ListCustomersQuery } from './list-customers.query';

@QueryHandler(ListCustomersQuery)
export class ListCustomersHandler implements IQueryHandler<ListCustomersQuery, CustomerPageJson> {
  constructor(private readonly readStore: ReadStore) {}

  execute({ page, pageSize, gt, lt }: ListCustomersQuery): Promise<CustomerPageJson> {
    // A huge page is past the end however far: held at the largest safe offset, it stays an
    // offset the read stores accept, and still past any end.
    const offset = Math.min((page - 1) * pageSize, Number.MAX_SAFE_INTEGER);
    return this.readStore.listCustomersJson({ gt, lt, offset, limit: pageSize });
  }
}
