import { Query } from '@nestjs/cqrs';
import { CustomerPage } from '@chronicle/read-models';

export class ListCustomersQuery extends Query<CustomerPage> {
  constructor(
    /** 1-based. */
    readonly page: number,
    readonly pageSize: number,
    readonly gt?: number,
    readonly lt?: number,
  ) {
    super();
  }
}
