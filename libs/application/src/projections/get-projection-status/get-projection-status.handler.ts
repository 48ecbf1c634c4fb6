import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CheckpointStore, EventStore, formatPosition, Position } from '@chronicle/event-store';
import { ALL_PROJECTIONS, READ_MODELS_CHECKPOINT, ReadStore } from '@chronicle/read-models';
import { passwordSaga } from '../../sagas/password.saga';
import { Clock } from '../../shared/clock';
import { GetProjectionStatusQuery, ProjectionStatus, ProjectionsStatus } from './get-projection-status.query';

/** Events counted for a lag: enough to tell "a little behind" from "far behind" without reading the history. */
export const LAG_COUNT_CAP = 10_000;

/** The sagas run by the projector (or in process on the embedded default), each with its own checkpoint. */
const SAGAS = [passwordSaga];

/**
 * Every processor's checkpoint and lag, and the parked messages. `readStore` null: the read models
 * live in other processes' memory (the CLI on the embedded default), so they are left out.
 */
export async function projectionsStatus(
  eventStore: EventStore,
  readStore: ReadStore | null,
  checkpoints: CheckpointStore,
  clock: Clock,
): Promise<ProjectionsStatus> {
  const [head, readModels, parked, sagas] = await Promise.all([
    eventStore.headPosition(),
    readStore === null ? Promise.resolve(null) : readStore.getCheckpoint(READ_MODELS_CHECKPOINT),
    checkpoints.parked(),
    Promise.all(SAGAS.map(async (saga) => ({ saga, checkpoint: await checkpoints.load(saga.name) }))),
  ]);
  // Every projection is fed by the one processor, so they share its checkpoint.
  const projections = readStore === null ? null : await lagAfter(eventStore, clock, readModels);
  return {
    head: head === null ? null : formatPosition(head),
    projections: projections === null ? [] : ALL_PROJECTIONS.map(({ name }) => ({ name, ...projections })),
    sagas: await Promise.all(
      sagas.map(async ({ saga, checkpoint }) => ({
        name: saga.name,
        ...(await lagAfter(eventStore, clock, checkpoint, saga.eventTypes)),
      })),
    ),
    parked: parked.map((message) => ({
      processor: message.processor,
      eventId: message.eventId,
      stream: message.stream,
      type: message.type,
      position: formatPosition(message.position),
      reason: message.reason,
      attempts: message.attempts,
      parkedAt: message.parkedAt,
    })),
  };
}

/**
 * Positions are not event counts on EventStoreDB, so the events (of `eventTypes`, if given) are
 * counted; the lag in seconds is how long the oldest of them has waited.
 */
async function lagAfter(
  eventStore: EventStore,
  clock: Clock,
  checkpoint: Position | null,
  eventTypes?: readonly string[],
): Promise<Omit<ProjectionStatus, 'name'>> {
  let count = 0;
  let oldest: string | null = null;
  const options = {
    limit: LAG_COUNT_CAP + 1,
    ...(checkpoint === null ? {} : { after: checkpoint }),
    ...(eventTypes === undefined ? {} : { eventTypes }),
  };
  for await (const event of eventStore.readAll(options)) {
    oldest ??= event.metadata.occurredAt;
    count++;
  }
  const waitedMs = oldest === null ? 0 : clock.now().getTime() - Date.parse(oldest);
  return {
    checkpoint: checkpoint === null ? null : formatPosition(checkpoint),
    lag: Math.min(count, LAG_COUNT_CAP),
    lagExact: count <= LAG_COUNT_CAP,
    lagSeconds: Math.max(0, waitedMs / 1000),
  };
}

@QueryHandler(GetProjectionStatusQuery)
export class GetProjectionStatusHandler implements IQueryHandler<
  GetProjectionStatusQuery,
  ProjectionsStatus
> {
  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly checkpoints: CheckpointStore,
    private readonly clock: Clock,
  ) {}

  execute(): Promise<ProjectionsStatus> {
    return projectionsStatus(this.eventStore, this.readStore, this.checkpoints, this.clock);
  }
}
