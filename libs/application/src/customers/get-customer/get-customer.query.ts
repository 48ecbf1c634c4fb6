import { Query } from '@nestjs/cqrs';
import { CustomerResult } from '../change-customer/change-customer.command';

export class GetCustomerQuery extends Query<CustomerResult> {
  constructor(readonly customerId: number) {
    super();
  }
}
