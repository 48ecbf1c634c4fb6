import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ReadStore, UserPage } from '@chronicle/read-models';
import { pageOffset } from '../../shared/paging';
import { ListUsersQuery } from './list-users.query';

/** The users read model as it is: eventually consistent, its lag the projections status's. */
@QueryHandler(ListUsersQuery)
export class ListUsersHandler implements IQueryHandler<ListUsersQuery, UserPage> {
  constructor(private readonly readStore: ReadStore) {}

  execute({ page, pageSize }: ListUsersQuery): Promise<UserPage> {
    return this.readStore.listUsers({ offset: pageOffset(page, pageSize), limit: pageSize });
  }
}
