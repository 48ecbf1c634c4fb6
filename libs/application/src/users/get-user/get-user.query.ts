import { Query } from '@nestjs/cqrs';
import { UserDocument } from '@chronicle/read-models';
import { Principal } from '../../shared/principal';
import { AsOf } from '../get-user-as-of/get-user-as-of.query';

export class GetUserQuery extends Query<UserDocument> {
  constructor(
    readonly userId: string,
    readonly principal: Principal,
    /** The user as it was then, folded from its stream; absent: as it is now. */
    readonly asOf?: AsOf,
  ) {
    super();
  }
}
