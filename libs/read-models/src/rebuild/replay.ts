import { comparePositions, EventStore, Position, RecordedEvent } from '@chronicle/event-store';
import { Projection } from '../projections/projection';
import { DocumentChange, ReadStore } from '../read-store.port';

export interface ReplayOptions {
  /** Exclusive: replay the events after this position; absent or null: from the first event. */
  after?: Position | null;
  /** The checkpoint written with each batch. */
  checkpointName: string;
  /** Events per applyBatch. Default 2,000. */
  batchSize?: number;
  /** Called after each batch with the events replayed so far and the last position applied. */
  onBatch?(events: number, position: Position): void;
  /** Aborts between batches: what was applied stays, nothing more is. */
  signal?: AbortSignal;
}

export interface Replayed {
  events: number;
  /** The last event applied, or `after` when there was none. */
  position: Position | null;
}

/**
 * Applies the history after `after` to `target`, batch by batch, until the store has no more
 * events. Only projections are fed: sagas never see a replay, so nothing is sent twice. Only the
 * event types the projections use are read (the store skips the rest), and the checkpoint still
 * ends at the head: the events skipped on the way change nothing.
 */
export async function replayInto(
  eventStore: EventStore,
  target: ReadStore,
  projections: readonly Projection[],
  options: ReplayOptions,
): Promise<Replayed> {
  const batchSize = options.batchSize ?? 2000;
  let position = options.after ?? null;
  let events = 0;
  let batch: RecordedEvent[] = [];
  const eventTypes = [...new Set(projections.flatMap((projection) => projection.eventTypes))];
  // Read first: the read below goes at least this far, so every event up to here is accounted for.
  const head = await eventStore.headPosition();
  const apply = async () => {
    options.signal?.throwIfAborted();
    const changes: DocumentChange[] = [];
    for (const event of batch)
      for (const projection of projections) changes.push(...projection.project(event));
    const last = batch[batch.length - 1].position;
    await target.applyBatch(changes, { projection: options.checkpointName, position: last });
    events += batch.length;
    position = last;
    batch = [];
    options.onBatch?.(events, last);
  };
  for await (const event of eventStore.readAll(
    position === null ? { eventTypes } : { after: position, eventTypes },
  )) {
    batch.push(event);
    if (batch.length >= batchSize) await apply();
  }
  if (batch.length > 0) await apply();
  if (head !== null && (position === null || comparePositions(head, position) > 0)) {
    options.signal?.throwIfAborted();
    await target.applyBatch([], { projection: options.checkpointName, position: head });
    position = head;
  }
  return { events, position };
}
