import {
  CLIENT_FIELD_NAMES,
  erasedSubjectOf,
  pickUserFields,
  SubjectErased,
  UserPatched,
  UserRegistered,
} from '@chronicle/domain';
import { RecordedEvent } from '@chronicle/event-store';
import { DocumentChange, UserDocument, userDocumentFields } from '../read-store.port';
import { Projection } from './projection';

/** The `users` collection: each user's full representation and the revision it reflects. */
export const usersProjection: Projection = {
  name: 'users',
  collection: 'users',
  eventTypes: ['UserRegistered.v2', 'UserPatched.v1', 'SubjectErased.v1'],
  project(event: RecordedEvent): DocumentChange[] {
    // Its subject's key is gone (the values read null): its SubjectErased.v1 deletes the document.
    if (event.erased) return [];
    switch (event.type) {
      case 'UserRegistered.v2': {
        const data = event.data as UserRegistered['data'];
        // A user that was never patched was last modified when it was created.
        const fields = pickUserFields({ ...data, modifiedon: data.createdon });
        const set = { id: data.userId, ...fields, revision: event.revision };
        return [{ collection: 'users', id: data.userId, position: event.position, set }];
      }
      case 'UserPatched.v1': {
        const data = event.data as UserPatched['data'];
        // Picked by the declaration, so that nothing but the fields a client sets can be changed.
        const changes = pickUserFields(data.changes, CLIENT_FIELD_NAMES);
        const set = { ...changes, modifiedon: data.modifiedon, revision: event.revision };
        return [{ collection: 'users', id: data.userId, position: event.position, set }];
      }
      case 'SubjectErased.v1': {
        const erased = erasedSubjectOf(event.data as SubjectErased['data']);
        if (erased.kind !== 'user') return [];
        return [{ collection: 'users', id: erased.userId, position: event.position, remove: true }];
      }
      default:
        return [];
    }
  },
};

/** A user document with a change's fields set over it: what every store does with a change. */
export function withUserChange(
  doc: Partial<UserDocument>,
  set: Partial<UserDocument>,
): Partial<UserDocument> {
  return { ...doc, ...userDocumentFields(set) };
}

/**
 * A user document brought up to date with events of its stream that followed it (`doc` null: the
 * whole stream), by this projection's own changes, so the result equals what the read store will
 * hold once it has applied them. Null when there is neither a document nor an event.
 */
export function foldUserDocument(
  id: string,
  doc: UserDocument | null,
  events: readonly RecordedEvent[],
): UserDocument | null {
  let folded: Partial<UserDocument> | null = doc;
  for (const event of events) {
    for (const change of usersProjection.project(event)) {
      if (change.collection !== 'users') continue;
      folded = change.remove ? null : withUserChange(folded ?? {}, change.set);
    }
  }
  return folded === null ? null : ({ id, ...userDocumentFields(folded) } as UserDocument);
}
