import { EVENT_SCHEMAS } from '@chronicle/domain';
import {
  CheckpointStore,
  EventProcessing,
  EventStore,
  formatPosition,
  ParkedMessage,
  Parking,
  Position,
  readToEnd,
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
 * (ProjectionsHandler, through the same EventProcessing): parked under its name where `parking`
 * is given (a rebuild), so that `projections status` and the parked-messages metric show them as
 * they show the live ones; counted only where it is not (a verify, which changes nothing).
 */
export class ParkedEvents implements Parking {
  private count = 0;
  private readonly first: ParkedEvent[] = [];

  constructor(
    /** The live processor's name, under which its parked messages are kept. */
    private readonly processor: string,
    private readonly parking: CheckpointStore | null,
  ) {}

  async park(message: ParkedMessage): Promise<void> {
    this.count++;
    if (this.first.length < FIRST_PARKED) {
      this.first.push({
        position: formatPosition(message.position),
        eventId: message.eventId,
        stream: message.stream,
        type: message.type,
        reason: message.reason,
      });
    }
    await this.parking?.park({ ...message, processor: this.processor });
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
 * events: the one-shot consumer (readToEnd) feeding the live processor's processing and handler,
 * so an event it would park (a type this build does not know, a projection that throws) is parked
 * here too, never skipped unnoticed. Only projections are fed: sagas never see a replay, so
 * nothing is sent twice. The store skips only the types this build knows and no projection uses,
 * and the checkpoint still ends at the head: the events skipped on the way change nothing.
 */
export function replayInto(
  eventStore: EventStore,
  target: ReadStore,
  projections: readonly Projection[],
  options: ReplayOptions,
): Promise<Replayed> {
  const handler = new ProjectionsHandler(target, projections, options.checkpointName);
  const used = new Set(projections.flatMap((projection) => projection.eventTypes));
  return readToEnd(eventStore, new EventProcessing(handler, options.parked), {
    after: options.after,
    exceptTypes: Object.keys(EVENT_SCHEMAS).filter((type) => !used.has(type)),
    batchSize: options.batchSize ?? 2000,
    signal: options.signal,
    onBatch: (events, position) => options.onBatch?.(events, position),
  });
}
