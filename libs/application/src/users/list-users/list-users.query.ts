import { Query } from '@nestjs/cqrs';
import { UserPage } from '@chronicle/read-models';

export class ListUsersQuery extends Query<UserPage> {
  constructor(
    /** 1-based. */
    readonly page: number,
    readonly pageSize: number,
  ) {
    super();
  }
}
