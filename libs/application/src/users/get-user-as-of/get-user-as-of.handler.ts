import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { NotFoundError, throwIfErased, userStreamName } from '@chronicle/domain';
import { comparePositions, EventStore } from '@chronicle/event-store';
import { foldUserDocument, UserDocument } from '@chronicle/read-models';
import { AsOf, GetUserAsOfQuery } from './get-user-as-of.query';

/**
 * The user as it was at `asOf` (at the head without it), folded from nothing by the users
 * projection's own fold. At a position: its stream's events up to it. At a time: the last version
 * whose `modifiedon`, the time the API gave for it, is at or before that time; `createdon` and
 * `modifiedon` are the writer's clock when the change was decided, never the store's later
 * `recordedAt`, so asking for the `modifiedon` a PATCH answered gives that PATCH's version. Null: no
 * user then.
 */
export async function userAsOf(store: EventStore, userId: string, asOf?: AsOf): Promise<UserDocument | null> {
  const stream = await store.readStream(userStreamName(userId));
  // Gone for good: not as it is, nor as it was (API.md).
  throwIfErased(stream, 'User');
  if (asOf === undefined) return foldUserDocument(userId, null, stream);
  if ('position' in asOf) {
    const end = stream.findIndex((event) => comparePositions(event.position, asOf.position) > 0);
    return foldUserDocument(userId, null, end === -1 ? stream : stream.slice(0, end));
  }
  let user: UserDocument | null = null;
  for (const event of stream) {
    const next = foldUserDocument(userId, user, [event]);
    if (next !== null && Date.parse(next.modifiedon) > asOf.at.getTime()) break;
    user = next;
  }
  return user;
}

@QueryHandler(GetUserAsOfQuery)
export class GetUserAsOfHandler implements IQueryHandler<GetUserAsOfQuery, UserDocument> {
  constructor(private readonly store: EventStore) {}

  async execute({ userId, asOf }: GetUserAsOfQuery): Promise<UserDocument> {
    const user = await userAsOf(this.store, userId, asOf);
    if (user === null) throw new NotFoundError('User');
    return user;
  }
}
