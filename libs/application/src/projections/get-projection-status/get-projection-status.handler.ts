import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CheckpointStore, EventStore, formatPosition, Position } from '@chronicle/event-store';
import { ALL_PROJECTIONS, READ_MODELS_CHECKPOINT, ReadStore } from '@chronicle/read-models';
import { passwordSaga } from '../../sagas/password.saga';
import { GetProjectionStatusQuery, ProjectionStatus, ProjectionsStatus } from './get-projection-status.query';

/** Events counted for a lag: enough to tell "a little behind" from "far behind" without reading the history. */
export const LAG_COUNT_CAP = 10_000;

const SAGAS = [passwordSaga];

/**
 * Every processor's checkpoint and lag, and the parked messages. `readStore` null: the read models
 * live in other processes' memory (the CLI on the embedded default), so they are left out.
 */
export async function projectionsStatus(
  eventStore: EventStore,
  readStore: ReadStore | null,
  checkpoints: CheckpointStore,
): Promise<ProjectionsStatus> {
  const [head, readModels, parked, sagas] = await Promise.all([
    eventStore.headPosition(),
    readStore === null ? Promise.resolve(null) : readStore.getCheckpoint(READ_MODELS_CHECKPOINT),
    checkpoints.parked(),
    Promise.all(SAGAS.map(async (saga) => ({ saga, checkpoint: await checkpoints.load(saga.name) }))),
  ]);
  // Every projection is fed by the one processor, so they share its checkpoint.
  const projections = readStore === null ? null : await lagAfter(eventStore, readModels);
  return {
    head: head === null ? null : formatPosition(head),
    projections: projections === null ? [] : ALL_PROJECTIONS.map(({ name }) => ({ name, ...projections })),
    sagas: await Promise.all(
      sagas.map(async ({ saga, checkpoint }) => ({
        name: saga.name,
        ...(await lagAfter(eventStore, checkpoint, saga.eventTypes)),
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

/** Positions are not event counts on EventStoreDB, so the events (of `eventTypes`, if given) are counted. */
async function lagAfter(
  eventStore: EventStore,
  checkpoint: Position | null,
  eventTypes?: readonly string[],
): Promise<Omit<ProjectionStatus, 'name'>> {
  let count = 0;
  const options = {
    limit: LAG_COUNT_CAP + 1,
    ...(checkpoint === null ? {} : { after: checkpoint }),
    ...(eventTypes === undefined ? {} : { eventTypes }),
  };
  for await (const _event of eventStore.readAll(options)) count++;
  const exact = count <= LAG_COUNT_CAP;
  return {
    checkpoint: checkpoint === null ? null : formatPosition(checkpoint),
    lag: exact ? count : LAG_COUNT_CAP,
    lagExact: exact,
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
  ) {}

  execute(): Promise<ProjectionsStatus> {
    return projectionsStatus(this.eventStore, this.readStore, this.checkpoints);
  }
}
