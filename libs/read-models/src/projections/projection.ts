import { RecordedEvent } from '@chronicle/event-store';
import { CollectionName, DocumentChange } from '../read-store.port';

/**
 * A pure function from one event to the document changes it causes. Events a projection does not
 * handle give no changes; every change carries the event's position, so replaying is harmless.
 */
export interface Projection {
  readonly name: string;
  /** The one collection it writes: what a rebuild of this projection alone swaps. */
  readonly collection: CollectionName;
  /** Every event type project() makes changes of: a replay skips the known types no projection lists. */
  readonly eventTypes: readonly string[];
  project(event: RecordedEvent): DocumentChange[];
}
