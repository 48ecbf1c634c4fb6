import { Query } from '@nestjs/cqrs';
import { CustomerPageJson } from '@chronicle/read-models';

export class ListCustomersQuery extends Query<CustomerPageJson> {
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
