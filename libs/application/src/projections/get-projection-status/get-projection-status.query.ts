import { Query } from '@nestjs/cqrs';

export interface ProjectionStatus {
  name: string;
  /** Position of the last event applied (formatted), null before the first. */
  checkpoint: string | null;
  /** Events in the store after the checkpoint. */
  lag: number;
  /** False when counting stopped at the cap: the lag is at least `lag`. */
  lagExact: boolean;
  /** How long the oldest event not yet applied has waited (by its occurredAt); 0 when caught up. */
  lagSeconds: number;
}

export interface ProjectionsStatus {
  /** Position of the newest event in the store (formatted), null for an empty store. */
  head: string | null;
  projections: ProjectionStatus[];
  /** Each saga, by the checkpoint of events it has handled. */
  sagas: ProjectionStatus[];
}

export class GetProjectionStatusQuery extends Query<ProjectionsStatus> {}
