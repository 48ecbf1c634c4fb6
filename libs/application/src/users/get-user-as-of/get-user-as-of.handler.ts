import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { NotFoundError, userStreamName } from '@chronicle/domain';
import { comparePositions, EventStore, RecordedEvent } from '@chronicle/event-store';
import { foldUserDocument, UserDocument } from '@chronicle/read-models';
import { AsOf, GetUserAsOfQuery } from './get-user-as-of.query';

/**
 * The time an as-of read compares: the store's recorded time, which never decreases with position
 * (the writer's occurredAt is the writer's word, and need not be in order).
 */
const eventTime = (event: RecordedEvent): string => event.recordedAt;

/** Whether the event had happened at `asOf`. */
function happenedBy(event: RecordedEvent, asOf: AsOf): boolean {
  return 'position' in asOf
    ? comparePositions(event.position, asOf.position) <= 0
    : Date.parse(eventTime(event)) <= asOf.at.getTime();
}

/**
 * The user as it was at `asOf` (at the head without it): its stream's events up to the first one
 * after that moment, folded from nothing by the users projection's own fold. Null: no user then.
 */
export async function userAsOf(store: EventStore, userId: string, asOf?: AsOf): Promise<UserDocument | null> {
  const stream = await store.readStream(userStreamName(userId));
  const end = asOf === undefined ? -1 : stream.findIndex((event) => !happenedBy(event, asOf));
  return foldUserDocument(userId, null, end === -1 ? stream : stream.slice(0, end));
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
