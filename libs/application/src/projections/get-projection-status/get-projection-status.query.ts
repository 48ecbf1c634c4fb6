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

/** A message a processor gave up on, as `projections status` lists it. */
export interface ParkedMessageStatus {
  processor: string;
  eventId: string;
  stream: string;
  type: string;
  /** Formatted. */
  position: string;
  reason: string;
  attempts: number;
  parkedAt: string;
}

export interface ProjectionsStatus {
  /** Position of the newest event in the store (formatted), null for an empty store. */
  head: string | null;
  projections: ProjectionStatus[];
  /** The sagas, each with its own durable checkpoint. */
  sagas: ProjectionStatus[];
  /** Messages parked by any processor, oldest first: they wait for `projections parked retry|drop`. */
  parked: ParkedMessageStatus[];
}

export class GetProjectionStatusQuery extends Query<ProjectionsStatus> {}
