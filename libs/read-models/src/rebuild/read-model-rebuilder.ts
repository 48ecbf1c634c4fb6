import { CheckpointStore, comparePositions, EventStore, Position, position } from '@chronicle/event-store';
import { Projection } from '../projections/projection';
import { ReadStore } from '../read-store.port';
import { compareReadModels, Difference, recheck } from './compare-read-models';
import { RebuildTarget } from './rebuild-target';
import { ParkedEvent, ParkedEvents, Replayed, replayInto } from './replay';

export interface RebuildProgress {
  /** Events replayed so far. */
  events: number;
  /** Share of the history (as it was when the replay started) replayed, 0 to 1. */
  fraction: number;
}

/** The events a replay could not project (the live processor parks the same ones), and the first few. */
export interface ParkedSummary {
  count: number;
  first: ParkedEvent[];
}

export interface RebuildResult {
  events: number;
  seconds: number;
  eventsPerSecond: number;
  /** Parked as the live processor parks them: `projections status` lists them. */
  parked: ParkedSummary;
}

export interface VerifyResult {
  /** 0 when the live read models equal a fresh replay. */
  differences: number;
  documents: number;
  events: number;
  /** The first differences, live document against replayed one. */
  first: Difference[];
  /** Events the replay could not project: the read models cannot be shown to hold what they changed. */
  parked: ParkedSummary;
}

export interface OperationOptions {
  onProgress?(progress: RebuildProgress): void;
  /** Abandons the operation between batches; the live models stay as they were. */
  signal?: AbortSignal;
}

export interface RebuildOptions extends OperationOptions {
  /** Rebuilds this projection alone (its collection); absent: every projection. */
  projection?: string;
}

/** A projection name that names none. */
export class UnknownProjectionError extends Error {
  readonly code = 'unknown-projection';
  constructor(name: string, known: readonly string[]) {
    super(`No projection is named "${name}"; the projections are ${known.join(', ')}`);
    this.name = 'UnknownProjectionError';
  }
}

/** Differences listed in a verify's result. */
const FIRST_DIFFERENCES = 10;
/** Rounds that give differences caused only by timing (live models a few events ahead or behind) time to settle. */
const SETTLE_ROUNDS = 3;
const SETTLE_TIMEOUT_MS = 5_000;
/** Beyond this many differences the models are plainly wrong: no point reading each one again. */
const MAX_RECHECKED = 10_000;

/**
 * `projections rebuild` and `projections verify`: replays every event into a new generation of
 * the read models, then swaps it in (rebuild) or compares it with the live one (verify).
 */
export class ReadModelRebuilder {
  constructor(
    private readonly eventStore: EventStore,
    private readonly target: RebuildTarget,
    private readonly projections: readonly Projection[],
    /** The live projection runner's checkpoint. */
    private readonly checkpointName: string,
    /**
     * Where the processors keep their checkpoints and parked messages: a rebuild parks there what
     * the live processor would park. And the log's other consumers (sagas, `names`): one left
     * beyond a wiped log is moved to the log's start, as they never saw any of its events.
     */
    private readonly processors: { checkpoints: CheckpointStore; names: readonly string[] } | null = null,
  ) {}

  async rebuild(options: RebuildOptions = {}): Promise<RebuildResult> {
    const started = process.hrtime.bigint();
    const projections = this.select(options.projection);
    // A live checkpoint beyond the log (the event store was wiped) stops the projector at start;
    // the rebuild is what that message prescribes, so it must leave the checkpoint in the log.
    const stale = await this.liveCheckpointBeyondLog();
    if (stale && options.projection !== undefined) {
      throw new Error(
        "The read models' checkpoint lies beyond the end of the event log: rebuild every projection, not one",
      );
    }
    const parked = new ParkedEvents(this.checkpointName, this.processors?.checkpoints ?? null);
    const generation = await this.target.create('rebuild');
    let events: number;
    let replayed: Replayed;
    try {
      replayed = await this.replay(generation, options, projections, parked);
      options.signal?.throwIfAborted();
      events = replayed.events;
      events += await this.target.swapIn(
        generation,
        replayed.position,
        (store, after, checkpointName) =>
          replayInto(this.eventStore, store, projections, { after, checkpointName, parked }),
        options.projection === undefined ? 'all' : projections.map((projection) => projection.collection),
      );
    } catch (error) {
      // The failure is the news: a clean-up that fails as well must not replace it.
      await this.target.discard(generation).catch(() => undefined);
      throw error;
    }
    if (stale) {
      const tail = await replayInto(this.eventStore, this.target.live, this.projections, {
        after: replayed.position,
        checkpointName: this.checkpointName,
        parked,
      });
      events += tail.events;
      if (tail.position !== null) {
        await this.target.live.applyBatch([], { projection: this.checkpointName, position: tail.position });
      }
    }
    for (const name of this.processors?.names ?? []) {
      const checkpoints = this.processors!.checkpoints;
      if (await this.beyondLog(await checkpoints.load(name))) await checkpoints.store(name, position(0));
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return {
      events,
      seconds: round(seconds, 3),
      eventsPerSecond: Math.round(events / Math.max(seconds, 1e-6)),
      parked: parked.summary(),
    };
  }

  async verify(options: OperationOptions = {}): Promise<VerifyResult> {
    // A verify changes nothing: it counts what it could not project, and parks none of it.
    const parked = new ParkedEvents(this.checkpointName, null);
    const scratch = await this.target.create('verify');
    try {
      let { events, position } = await this.replay(scratch, options, this.projections, parked);
      const comparison = await compareReadModels(this.target.live, scratch);
      let differences = comparison.differences;
      // The live models keep following new events: a difference may only mean one side is a
      // few events ahead. Bring both to the same position and look again before reporting it.
      for (let round = 0; round < SETTLE_ROUNDS && differences.length > 0; round++) {
        if (differences.length > MAX_RECHECKED) break;
        options.signal?.throwIfAborted();
        const tail = await replayInto(this.eventStore, scratch, this.projections, {
          after: position,
          checkpointName: this.checkpointName,
          parked,
        });
        events += tail.events;
        position = tail.position;
        await this.waitForLive(position);
        differences = await recheck(this.target.live, scratch, differences);
      }
      return {
        differences: differences.length,
        documents: comparison.documents,
        events,
        first: differences.slice(0, FIRST_DIFFERENCES),
        parked: parked.summary(),
      };
    } finally {
      await this.target.discard(scratch);
    }
  }

  private async liveCheckpointBeyondLog(): Promise<boolean> {
    return this.beyondLog(await this.target.live.getCheckpoint(this.checkpointName));
  }

  private async beyondLog(live: Position | null): Promise<boolean> {
    if (live === null) return false;
    const end = await this.eventStore.endPosition();
    return end === null || comparePositions(live, end) > 0;
  }

  /** Every projection, or the one named. */
  private select(name: string | undefined): readonly Projection[] {
    if (name === undefined) return this.projections;
    const named = this.projections.filter((projection) => projection.name === name);
    if (named.length === 0)
      throw new UnknownProjectionError(
        name,
        this.projections.map((p) => p.name),
      );
    return named;
  }

  private async replay(
    store: ReadStore,
    options: OperationOptions,
    projections: readonly Projection[],
    parked: ParkedEvents,
  ) {
    const head = await this.eventStore.headPosition();
    return replayInto(this.eventStore, store, projections, {
      checkpointName: this.checkpointName,
      parked,
      signal: options.signal,
      onBatch: (events, position) => options.onProgress?.({ events, fraction: fractionOf(position, head) }),
    });
  }

  private async waitForLive(position: Position | null): Promise<void> {
    if (position === null) return;
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const live = await this.target.live.getCheckpoint(this.checkpointName);
      if (live !== null && comparePositions(live, position) >= 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** How far `position` is through a log ending at `head`, by commit position. */
function fractionOf(position: Position, head: Position | null): number {
  if (head === null || head.commit === 0n) return 1;
  return Math.min(1, Number(position.commit) / Number(head.commit));
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
