import { EventStore, RecordedEvent } from '../event-store.port';
import { comparePositions, Position } from '../position';
import { EventProcessing } from './event-processing';

export interface ReadToEndOptions {
  /** Exclusive: the events after this position; absent or null: from the first event. */
  after?: Position | null;
  /** Every event but those of these types, as stored: the store skips them itself. */
  exceptTypes: readonly string[];
  /** Most events handed over per batch. */
  batchSize: number;
  /** Aborts between batches: what was committed stays, nothing more is. */
  signal?: AbortSignal;
  /** Called after each batch with the events handed over so far and the last position committed. */
  onBatch?(events: number, position: Position): void;
}

export interface ReadToEndResult {
  events: number;
  /** The checkpoint committed last, or `after` when there was none. */
  position: Position | null;
}

/**
 * The consumer of a one-shot run (a replay), beside EventConsumer's subscription: reads the log
 * after `after` to its end, hands it to `processing` in batches of `batchSize`, each committed
 * with its last event, and commits the head when the read ended before it (the store skipped the
 * events there, which change nothing). The head is read first: the read goes at least that far,
 * so every event up to it is accounted for. One array per batch and no await per event: a
 * rebuild's throughput is this loop's.
 */
export async function readToEnd(
  eventStore: EventStore,
  processing: EventProcessing,
  options: ReadToEndOptions,
): Promise<ReadToEndResult> {
  const { exceptTypes, batchSize, signal } = options;
  let position = options.after ?? null;
  let events = 0;
  let batch: RecordedEvent[] = [];
  const head = await eventStore.headPosition();
  const apply = async () => {
    signal?.throwIfAborted();
    const last = batch[batch.length - 1].position;
    await processing.process(batch, last);
    events += batch.length;
    position = last;
    batch = [];
    options.onBatch?.(events, last);
  };
  for await (const event of eventStore.readAll(
    position === null ? { exceptTypes } : { after: position, exceptTypes },
  )) {
    batch.push(event);
    if (batch.length >= batchSize) await apply();
  }
  if (batch.length > 0) await apply();
  if (head !== null && (position === null || comparePositions(head, position) > 0)) {
    signal?.throwIfAborted();
    await processing.process([], head);
    position = head;
  }
  return { events, position };
}
