import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { EventStore, formatPosition, Position } from '@chronicle/event-store';
import { ALL_PROJECTIONS, READ_MODELS_CHECKPOINT, ReadStore } from '@chronicle/read-models';
import { passwordSaga } from '../../sagas/password.saga';
import { Clock } from '../../shared/clock';
import { GetProjectionStatusQuery, ProjectionsStatus } from './get-projection-status.query';

/** Events counted for a lag: enough to tell "a little behind" from "far behind" without reading the history. */
export const LAG_COUNT_CAP = 10_000;

/** The sagas run by the projector (or in process on the embedded default), each with its own checkpoint. */
const SAGAS = [passwordSaga];

interface Lag {
  checkpoint: string | null;
  lag: number;
  lagExact: boolean;
  lagSeconds: number;
}

@QueryHandler(GetProjectionStatusQuery)
export class GetProjectionStatusHandler implements IQueryHandler<
  GetProjectionStatusQuery,
  ProjectionsStatus
> {
  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly clock: Clock,
  ) {}

  async execute(): Promise<ProjectionsStatus> {
    const [head, readModels, ...sagas] = await Promise.all([
      this.eventStore.headPosition(),
      this.lagOf(READ_MODELS_CHECKPOINT),
      ...SAGAS.map((saga) => this.lagOf(saga.name)),
    ]);
    return {
      head: head === null ? null : formatPosition(head),
      // Every projection is fed by the one runner, so they share its checkpoint.
      projections: ALL_PROJECTIONS.map((projection) => ({ name: projection.name, ...readModels })),
      sagas: SAGAS.map((saga, i) => ({ name: saga.name, ...sagas[i] })),
    };
  }

  /** Positions are not event counts on EventStoreDB, so the events are counted. */
  private async lagOf(checkpointName: string): Promise<Lag> {
    const checkpoint: Position | null = await this.readStore.getCheckpoint(checkpointName);
    let count = 0;
    let oldest: string | null = null;
    const options =
      checkpoint === null ? { limit: LAG_COUNT_CAP + 1 } : { after: checkpoint, limit: LAG_COUNT_CAP + 1 };
    for await (const event of this.eventStore.readAll(options)) {
      oldest ??= event.metadata.occurredAt;
      count++;
    }
    const waitedMs = oldest === null ? 0 : this.clock.now().getTime() - Date.parse(oldest);
    return {
      checkpoint: checkpoint === null ? null : formatPosition(checkpoint),
      lag: Math.min(count, LAG_COUNT_CAP),
      lagExact: count <= LAG_COUNT_CAP,
      lagSeconds: Math.max(0, waitedMs / 1000),
    };
  }
}
