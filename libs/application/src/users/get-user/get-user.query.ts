import { Query } from '@nestjs/cqrs';
import { UserDocument } from '@chronicle/read-models';
import { Principal } from '../../shared/principal';

export class GetUserQuery extends Query<UserDocument> {
  constructor(
    readonly userId: string,
    readonly principal: Principal,
  ) {
    super();
  }
}
