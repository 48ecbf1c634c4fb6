import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { EventStore, formatPosition, Position } from '@chronicle/event-store';
import { ALL_PROJECTIONS, READ_MODELS_CHECKPOINT, ReadStore } from '@chronicle/read-models';
import { GetProjectionStatusQuery, ProjectionsStatus } from './get-projection-status.query';

/** Events counted for a lag: enough to tell "a little behind" from "far behind" without reading the history. */
export const LAG_COUNT_CAP = 10_000;

@QueryHandler(GetProjectionStatusQuery)
export class GetProjectionStatusHandler implements IQueryHandler<
  GetProjectionStatusQuery,
  ProjectionsStatus
> {
  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
  ) {}

  async execute(): Promise<ProjectionsStatus> {
    const [head, checkpoint] = await Promise.all([
      this.eventStore.headPosition(),
      this.readStore.getCheckpoint(READ_MODELS_CHECKPOINT),
    ]);
    const lag = await this.countAfter(checkpoint);
    // Every projection is fed by the one runner, so they share its checkpoint.
    return {
      head: head === null ? null : formatPosition(head),
      projections: ALL_PROJECTIONS.map((projection) => ({
        name: projection.name,
        checkpoint: checkpoint === null ? null : formatPosition(checkpoint),
        lag: lag.count,
        lagExact: lag.exact,
      })),
    };
  }

  /** Positions are not event counts on EventStoreDB, so the events are counted. */
  private async countAfter(checkpoint: Position | null): Promise<{ count: number; exact: boolean }> {
    let count = 0;
    const options =
      checkpoint === null ? { limit: LAG_COUNT_CAP + 1 } : { after: checkpoint, limit: LAG_COUNT_CAP + 1 };
    for await (const _event of this.eventStore.readAll(options)) count++;
    return count > LAG_COUNT_CAP ? { count: LAG_COUNT_CAP, exact: false } : { count, exact: true };
  }
}
