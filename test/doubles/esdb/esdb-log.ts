/**
 * The double's in-memory transaction log: streams, the `$all` order, optimistic concurrency and
 * idempotent appends by event id, modelled on a single EventStoreDB node.
 */

export interface LogPosition {
  commit: bigint;
  prepare: bigint;
}

export interface ProposedEvent {
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  customMetadata: Uint8Array;
}

export interface StoredEvent extends ProposedEvent {
  stream: string;
  revision: bigint;
  position: LogPosition;
  /** 100-nanosecond ticks since the Unix epoch, as the server reports `created`. */
  created: bigint;
  /** Index in `$all`, for O(1) resumption. */
  index: number;
}

export type ExpectedState =
  | { kind: 'any' }
  | { kind: 'no_stream' }
  | { kind: 'stream_exists' }
  | { kind: 'revision'; revision: bigint };

export type AppendOutcome =
  | { kind: 'success'; currentRevision: bigint | null; position: LogPosition | null }
  | { kind: 'wrong_expected_version'; currentRevision: bigint | null };

/** Where real servers start user data: after the log's own header records. */
const FIRST_POSITION = 1_024n;
/** Bytes a record takes besides its payload, so positions are sparse as on the server. */
const RECORD_OVERHEAD = 96n;
const TICKS_PER_MILLISECOND = 10_000n;

export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

export class EsdbLog {
  private readonly all: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly listeners = new Set<(event: StoredEvent) => void>();
  private nextPosition = FIRST_POSITION;

  append(stream: string, expected: ExpectedState, proposed: ProposedEvent[]): AppendOutcome {
    const existing = this.streams.get(stream) ?? [];
    const current = existing.length === 0 ? null : BigInt(existing.length - 1);

    const retried = this.matchRetry(existing, expected, proposed);
    if (retried === 'conflict') return { kind: 'wrong_expected_version', currentRevision: current };
    if (retried) return retried;

    if (!this.satisfies(expected, current))
      return { kind: 'wrong_expected_version', currentRevision: current };
    if (proposed.length === 0) {
      const last = existing.at(-1);
      return { kind: 'success', currentRevision: current, position: last ? last.position : null };
    }

    const created = BigInt(Date.now()) * TICKS_PER_MILLISECOND;
    const written = proposed.map((event, offset): StoredEvent => {
      const position = { commit: this.nextPosition, prepare: this.nextPosition };
      this.nextPosition +=
        RECORD_OVERHEAD + BigInt(event.data.length + event.customMetadata.length + stream.length);
      return {
        ...event,
        stream,
        revision: BigInt(existing.length + offset),
        position,
        created,
        index: this.all.length + offset,
      };
    });
    existing.push(...written);
    this.streams.set(stream, existing);
    this.all.push(...written);
    for (const event of written) for (const listener of [...this.listeners]) listener(event);
    const last = written[written.length - 1];
    return { kind: 'success', currentRevision: last.revision, position: last.position };
  }

  stream(stream: string): readonly StoredEvent[] | undefined {
    return this.streams.get(stream);
  }

  /** Every event of `$all` in log order. */
  events(): readonly StoredEvent[] {
    return this.all;
  }

  /** Where the next record will be written: a valid position to read from, holding nothing yet. */
  end(): LogPosition {
    return { commit: this.nextPosition, prepare: this.nextPosition };
  }

  /** Whether a read may start at `position`: the start, a record's first byte, or the end. */
  startsRecord(position: LogPosition): boolean {
    if (position.commit === 0n && position.prepare === 0n) return true;
    if (comparePositions(position, this.end()) === 0) return true;
    const at = this.all[this.indexAtOrAfter(position)];
    return at !== undefined && comparePositions(at.position, position) === 0;
  }

  /** Index of the first event at or after `position` (forwards) in `$all`. */
  indexAtOrAfter(position: LogPosition): number {
    let low = 0;
    let high = this.all.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (comparePositions(this.all[middle].position, position) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Calls `listener` for every event appended from now on, until the returned function is called. */
  onAppend(listener: (event: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private satisfies(expected: ExpectedState, current: bigint | null): boolean {
    switch (expected.kind) {
      case 'any':
        return true;
      case 'no_stream':
        return current === null;
      case 'stream_exists':
        return current !== null;
      case 'revision':
        return current === expected.revision;
    }
  }

  /**
   * The server's idempotency check: a retried write whose ids are already in the stream at the
   * place the expected revision names succeeds again without writing; a partial overlap conflicts.
   */
  private matchRetry(
    existing: StoredEvent[],
    expected: ExpectedState,
    proposed: ProposedEvent[],
  ): AppendOutcome | 'conflict' | null {
    if (proposed.length === 0) return null;
    let start: number;
    switch (expected.kind) {
      case 'revision':
        start = Number(expected.revision) + 1;
        break;
      case 'no_stream':
        start = 0;
        break;
      case 'any':
      case 'stream_exists':
        start = existing.findIndex((event) => event.id === proposed[0].id);
        if (start < 0) return null;
        break;
    }
    if (start >= existing.length || existing[start].id !== proposed[0].id) return null;
    const matches = proposed.every((event, offset) => existing[start + offset]?.id === event.id);
    if (!matches) return 'conflict';
    const last = existing[start + proposed.length - 1];
    return { kind: 'success', currentRevision: last.revision, position: last.position };
  }
}
