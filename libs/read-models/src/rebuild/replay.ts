import { EVENT_SCHEMAS } from '@chronicle/domain';
import {
  CheckpointStore,
  comparePositions,
  EventStore,
  formatPosition,
  parkedMessage,
  PermanentFailure,
  Position,
  RecordedEvent,
} from '@chronicle/event-store';
import { ProjectionsHandler } from '../projection-processor';
import { Projection } from '../projections/projection';
import { ReadStore } from '../read-store.port';

/** An event a replay set aside, as its result shows it. */
export interface ParkedEvent {
  position: string;
  eventId: string;
  stream: string;
  type: string;
  reason: string;
}

/** Parked events listed in a result. */
const FIRST_PARKED = 10;

/**
 * The events a replay could not project, set aside by the live processor's own rule
 * (ProjectionsHandler): parked under its name where `parking` is given (a rebuild), so that
 * `projections status` and the parked-messages metric show them as they show the live ones;
 * counted only where it is not (a verify, which changes nothing).
 */
export class ParkedEvents {
  private count = 0;
  private readonly first: ParkedEvent[] = [];

  constructor(
    /** The live processor's name, under which its parked messages are kept. */
    private readonly processor: string,
    private readonly parking: CheckpointStore | null,
  ) {}

  async add(event: RecordedEvent, reason: string): Promise<void> {
    this.count++;
    if (this.first.length < FIRST_PARKED) {
      this.first.push({
        position: formatPosition(event.position),
        eventId: event.id,
        stream: event.stream,
        type: event.type,
        reason,
      });
    }
    await this.parking?.park(parkedMessage(this.processor, event, reason, 1));
  }

  /** What a result shows: the count and the first few. */
  summary(): { count: number; first: ParkedEvent[] } {
    return { count: this.count, first: [...this.first] };
  }
}

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
  /** Where the events the projections cannot use go, as the live processor parks them. */
  parked: ParkedEvents;
}

export interface Replayed {
  events: number;
  /** The last event applied, or `after` when there was none. */
  position: Position | null;
}

/**
 * Applies the history after `after` to `target`, batch by batch, until the store has no more
 * events. Only projections are fed: sagas never see a replay, so nothing is sent twice. Each event
 * goes through the live processor's handler, so an event it would park (a type this build does
 * not know, a projection that throws) is parked here too, never skipped unnoticed. The store skips
 * only the types this build knows and no projection uses, and the checkpoint still ends at the
 * head: the events skipped on the way change nothing.
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
  const handler = new ProjectionsHandler(target, projections, options.checkpointName);
  const used = new Set(projections.flatMap((projection) => projection.eventTypes));
  const exceptTypes = Object.keys(EVENT_SCHEMAS).filter((type) => !used.has(type));
  // Read first: the read below goes at least this far, so every event up to here is accounted for.
  const head = await eventStore.headPosition();
  const apply = async () => {
    options.signal?.throwIfAborted();
    for (const event of batch) {
      try {
        handler.handle(event);
      } catch (error) {
        if (!(error instanceof PermanentFailure)) throw error;
        await options.parked.add(event, error.message);
      }
    }
    const last = batch[batch.length - 1].position;
    await handler.commit(last);
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
    options.signal?.throwIfAborted();
    await target.applyBatch([], { projection: options.checkpointName, position: head });
    position = head;
  }
  return { events, position };
}
