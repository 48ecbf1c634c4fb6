import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { NotFoundError, throwIfErased, userStreamName } from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { foldUserDocument, ReadStore, UserDocument } from '@chronicle/read-models';
import { ForbiddenError } from '../../shared/application-errors';
import { isAdmin, Principal } from '../../shared/principal';
import { AsOf } from '../get-user-as-of/get-user-as-of.query';
import { userAsOf } from '../get-user-as-of/get-user-as-of.handler';
import { GetUserQuery } from './get-user.query';

/**
 * Who may read which user: an admin any; a user its own; past states for admins and auditors.
 * Checked before anything is read, so a caller learns nothing about users it may not read.
 */
export function checkUserAccess(principal: Principal, userId: string, asOf: AsOf | undefined): void {
  if (isAdmin(principal)) return;
  if (asOf !== undefined) {
    if (!principal.roles.includes('auditor')) {
      throw new ForbiddenError('Only administrators and auditors read users as they were');
    }
    return;
  }
  if (!principal.roles.includes('user') || principal.userId !== userId) {
    throw new ForbiddenError('You may read only your own user');
  }
}

/**
 * A user from the users read model, brought up to date with its stream: read your own writes on
 * every deployment, whatever the projector's lag. The stored document says which revision it
 * reflects; the events after it (none, nearly always) are read from the event store, which has
 * every acknowledged write, and folded in by the projection itself. Costs one document read and
 * one read of the stream's tail; a lagging read model adds only the events it lacks.
 *
 * As of a past moment: userAsOf, the stream's events up to it folded by the same projection.
 */
@QueryHandler(GetUserQuery)
export class GetUserHandler implements IQueryHandler<GetUserQuery, UserDocument> {
  constructor(
    private readonly readStore: ReadStore,
    private readonly events: EventStore,
  ) {}

  async execute({ userId, principal, asOf }: GetUserQuery): Promise<UserDocument> {
    checkUserAccess(principal, userId, asOf);
    const user = asOf === undefined ? await this.current(userId) : await userAsOf(this.events, userId, asOf);
    if (user === null) throw new NotFoundError('User');
    return user;
  }

  private async current(userId: string): Promise<UserDocument | null> {
    // The document first: whatever the tail read after it holds is newer, never older.
    const stored = await this.readStore.getUser(userId);
    // A document written before documents carried their revision is rebuilt from the stream.
    const base = stored?.revision === undefined ? null : stored;
    const tail = await this.events.readStream(userStreamName(userId), {
      fromRevision: base === null ? 0 : base.revision + 1,
    });
    throwIfErased(tail, 'User');
    return foldUserDocument(userId, base, tail);
  }
}
