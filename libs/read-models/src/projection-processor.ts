import {
  EventProcessor,
  EventProcessorOptions,
  EventStore,
  formatPosition,
  PermanentFailure,
  Position,
  ProcessorHandler,
  RecordedEvent,
} from '@chronicle/event-store';
import { unknownEventTypeReason } from '@chronicle/domain';
import { traceProjectionBatch } from '@chronicle/tracing';
import { errorMessage } from '@chronicle/config';
import { Projection } from './projections/projection';
import { DocumentChange, ReadStore } from './read-store.port';

/**
 * The projections as a processor handler: each event becomes document changes, and a batch's
 * changes are applied in one ReadStore call with their checkpoint, so the read models and their
 * checkpoint never disagree.
 */
export class ProjectionsHandler implements ProcessorHandler {
  private changes: DocumentChange[] = [];
  /** Events handled since the last commit: the batch's size, for its trace. */
  private events = 0;

  constructor(
    private readonly readStore: ReadStore,
    private readonly projections: readonly Projection[],
    /** The checkpoint's name in the read store. */
    readonly name: string,
  ) {}

  loadCheckpoint(): Promise<Position | null> {
    return this.readStore.getCheckpoint(this.name);
  }

  /**
   * A projection is pure: one that throws on an event always will, so the event is parked. So is
   * an event of a type this build does not know: no projection can tell whether it needed it.
   */
  handle(event: RecordedEvent): void {
    const unknown = unknownEventTypeReason(event.type);
    if (unknown !== null) {
      throw new PermanentFailure(
        `${unknown}: the read models lack whatever it changed. Run a build that knows it, then ` +
          '`projections rebuild`, then `projections parked drop` this message',
      );
    }
    const changes: DocumentChange[] = [];
    for (const projection of this.projections) {
      try {
        changes.push(...projection.project(event));
      } catch (error) {
        throw new PermanentFailure(
          `Projection ${projection.name} failed on ${event.type} at ${formatPosition(event.position)} in ` +
            `${event.stream}: ${errorMessage(error)}`,
          { cause: error },
        );
      }
    }
    this.changes.push(...changes);
    this.events++;
  }

  async commit(upTo: Position): Promise<void> {
    await traceProjectionBatch(this.name, this.events, () =>
      this.readStore.applyBatch(this.changes, { projection: this.name, position: upTo }),
    );
    this.discard();
  }

  discard(): void {
    this.changes = [];
    this.events = 0;
  }
}

export interface ProjectionProcessorOptions extends EventProcessorOptions {
  /** The name the checkpoint is stored under in the read store. */
  checkpointName: string;
}

/** The event processor that feeds the read models. */
export class ProjectionProcessor extends EventProcessor {
  constructor(
    eventStore: EventStore,
    readStore: ReadStore,
    projections: readonly Projection[],
    options: ProjectionProcessorOptions,
  ) {
    super(eventStore, new ProjectionsHandler(readStore, projections, options.checkpointName), options);
  }
}
