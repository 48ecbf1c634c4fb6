import {
  CUSTOMER_CLIENT_FIELD_NAMES,
  CustomerChanged,
  CustomerRegistered,
  erasedSubjectOf,
  pickCustomerFields,
  SubjectErased,
} from '@chronicle/domain';
import { RecordedEvent } from '@chronicle/event-store';
import { DocumentChange } from '../read-store.port';
import { Projection } from './projection';

/** The `customers` collection behind GET /customers. */
export const customersProjection: Projection = {
  name: 'customers',
  collection: 'customers',
  eventTypes: ['CustomerRegistered.v1', 'CustomerChanged.v1', 'SubjectErased.v1'],
  project(event: RecordedEvent): DocumentChange[] {
    // Its subject's key is gone (the values read null): its SubjectErased.v1 deletes the document.
    if (event.erased) return [];
    switch (event.type) {
      case 'CustomerRegistered.v1': {
        const data = event.data as CustomerRegistered['data'];
        return [
          {
            collection: 'customers',
            id: data.customerId,
            position: event.position,
            set: { id: data.customerId, ...pickCustomerFields(data) },
          },
        ];
      }
      case 'CustomerChanged.v1': {
        const data = event.data as CustomerChanged['data'];
        return [
          {
            collection: 'customers',
            id: data.customerId,
            position: event.position,
            // Picked by the declaration, so that nothing but the fields a client sets can be changed.
            set: pickCustomerFields(data.changes, CUSTOMER_CLIENT_FIELD_NAMES),
          },
        ];
      }
      case 'SubjectErased.v1': {
        const erased = erasedSubjectOf(event.data as SubjectErased['data']);
        if (erased.kind !== 'customer') return [];
        return [{ collection: 'customers', id: erased.customerId, position: event.position, remove: true }];
      }
      default:
        return [];
    }
  },
};
