import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { NotFoundError, userStreamName } from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { foldUserDocument, ReadStore, UserDocument } from '@chronicle/read-models';
import { ForbiddenError } from '../../shared/application-errors';
import { isAdmin } from '../../shared/principal';
import { GetUserQuery } from './get-user.query';

/**
 * A user from the users read model, brought up to date with its stream: read your own writes on
 * every deployment, whatever the projector's lag. The stored document says which revision it
 * reflects; the events after it (none, nearly always) are read from the event store, which has
 * every acknowledged write, and folded in by the projection itself. Costs one document read and
 * one read of the stream's tail; a lagging read model adds only the events it lacks.
 */
@QueryHandler(GetUserQuery)
export class GetUserHandler implements IQueryHandler<GetUserQuery, UserDocument> {
  constructor(
    private readonly readStore: ReadStore,
    private readonly events: EventStore,
  ) {}

  async execute({ userId, principal }: GetUserQuery): Promise<UserDocument> {
    // Checked before anything is read, so a non-admin learns nothing about other users.
    if (!isAdmin(principal) && principal.userId !== userId) {
      throw new ForbiddenError('You may read only your own user');
    }
    // The document first: whatever the tail read after it holds is newer, never older.
    const stored = await this.readStore.getUser(userId);
    // A document written before documents carried their revision is rebuilt from the stream.
    const base = stored?.revision === undefined ? null : stored;
    const tail = await this.events.readStream(userStreamName(userId), {
      fromRevision: base === null ? 0 : base.revision + 1,
    });
    const user = foldUserDocument(userId, base, tail);
    if (user === null) throw new NotFoundError('User');
    return user;
  }
}
