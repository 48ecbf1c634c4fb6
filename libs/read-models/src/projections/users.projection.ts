import { UserPatched, UserRegistered } from '@chronicle/domain';
import { RecordedEvent } from '@chronicle/event-store';
import { DocumentChange, UserDocument } from '../read-store.port';
import { Projection } from './projection';

/** The `users` collection: each user's full representation. */
export const usersProjection: Projection = {
  name: 'users',
  eventTypes: ['UserRegistered.v2', 'UserPatched.v1'],
  project(event: RecordedEvent): DocumentChange[] {
    switch (event.type) {
      case 'UserRegistered.v2': {
        const data = event.data as UserRegistered['data'];
        return [
          {
            collection: 'users',
            id: data.userId,
            position: event.position,
            // A user that was never patched was last modified when it was created.
            set: {
              id: data.userId,
              name: data.name,
              age: data.age,
              createdon: data.createdon,
              modifiedon: data.createdon,
            },
          },
        ];
      }
      case 'UserPatched.v1': {
        const data = event.data as UserPatched['data'];
        // Picked one by one so that nothing but the patchable fields can reach the document.
        const set: Partial<UserDocument> = { modifiedon: data.modifiedon };
        if (data.changes.name !== undefined) set.name = data.changes.name;
        if (data.changes.age !== undefined) set.age = data.changes.age;
        return [{ collection: 'users', id: data.userId, position: event.position, set }];
      }
      default:
        return [];
    }
  },
};
