import { Position } from '../position';

/** A message a processor gave up on, kept with its reason until an operator retries or drops it. */
export interface ParkedMessage {
  /** The processor that parked it. */
  processor: string;
  eventId: string;
  stream: string;
  revision: number;
  type: string;
  position: Position;
  /** Why: the permanent failure, or the last of too many transient ones. */
  reason: string;
  /** Attempts made before parking. */
  attempts: number;
  /** RFC 3339. */
  parkedAt: string;
}

/**
 * Where processors keep their checkpoints and parked messages, durably: in the embedded store's
 * SQLite database on the default, in MongoDB in production. Owned by the event processor.
 */
export abstract class CheckpointStore {
  /** The processor's stored position, null before its first. */
  abstract load(processor: string): Promise<Position | null>;

  /** Stores the processor's position; storing the same or an older one again is harmless. */
  abstract store(processor: string, position: Position): Promise<void>;

  /** The processor's own state kept beside its checkpoint (storeState): JSON values by key. */
  abstract loadState(processor: string): Promise<Map<string, unknown>>;

  /**
   * Stores changed entries of the processor's state (null removes one) with its position, so that
   * a restart replays only the events after it. Processes of several instances may share the
   * processor's name: nothing stored at a later position is overwritten by an earlier one. In one
   * transaction where the store allows it (SQLite); else entry by entry, each guarded by its
   * position, then the checkpoint (MongoDB without a replica set's transactions), so that a crash
   * between leaves the state ahead of its checkpoint: the processor's handling must be idempotent.
   */
  abstract storeState(
    processor: string,
    position: Position,
    changes: ReadonlyMap<string, unknown>,
  ): Promise<void>;

  /** Keeps the message as parked; parking it again replaces the earlier record. */
  abstract park(message: ParkedMessage): Promise<void>;

  /** Parked messages in position order, of one processor or of all. */
  abstract parked(processor?: string): Promise<ParkedMessage[]>;

  /** Removes a parked message; false when there was none. */
  abstract unpark(processor: string, eventId: string): Promise<boolean>;

  /**
   * Forgets the processor's position and state (not its parked messages): it starts from the
   * beginning of the log again. For a log whose positions are another's (history protect --to).
   */
  abstract reset(processor: string): Promise<void>;

  abstract close(): Promise<void>;
}
