import { RecordedEvent } from '@chronicle/event-store';
import { DocumentChange } from '../read-store.port';

/**
 * A pure function from one event to the document changes it causes. Events a projection does not
 * handle give no changes; every change carries the event's position, so replaying is harmless.
 */
export interface Projection {
  readonly name: string;
  project(event: RecordedEvent): DocumentChange[];
}
