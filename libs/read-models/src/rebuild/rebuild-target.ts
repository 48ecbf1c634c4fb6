import { Position } from '@chronicle/event-store';
import { MemoryReadStore } from '../memory/memory-read-store';
import { CollectionName, ReadStore } from '../read-store.port';
import { Replayed } from './replay';

/** Applies the events after `after` to `store`, with its checkpoint under `checkpointName`. */
export type CatchUp = (store: ReadStore, after: Position | null, checkpointName: string) => Promise<Replayed>;

/** Where a rebuild builds its new generation of read models, and how that generation goes live. */
export interface RebuildTarget {
  /** The read models readers use now. */
  readonly live: ReadStore;
  /** A fresh, empty generation beside the live one. */
  create(purpose: 'rebuild' | 'verify'): Promise<ReadStore>;
  /**
   * Makes `generation` (replayed up to `position`) the live read models, catching up whatever
   * the live models applied meanwhile, so that no event is lost. Returns the events caught up.
   * `collections`: only those go live (a rebuild of some projections); the live checkpoint stays.
   */
  swapIn(
    generation: ReadStore,
    position: Position | null,
    catchUp: CatchUp,
    collections: readonly CollectionName[] | 'all',
  ): Promise<number>;
  /** Throws a generation away (a verify's scratch copy, or a rebuild that failed). */
  discard(generation: ReadStore): Promise<void>;
}

/** Rounds of catching up before a swap gives up: only a live store racing ahead forever needs more. */
const MAX_SWAP_ATTEMPTS = 100;

/**
 * The embedded default: a new in-memory generation, taken over by the live store in one
 * synchronous step once it holds everything the live store has applied (MemoryReadStore.adopt).
 */
export class MemoryRebuildTarget implements RebuildTarget {
  constructor(
    readonly live: MemoryReadStore,
    private readonly checkpointName: string,
  ) {}

  create(): Promise<ReadStore> {
    return Promise.resolve(new MemoryReadStore());
  }

  async swapIn(
    generation: ReadStore,
    position: Position | null,
    catchUp: CatchUp,
    collections: readonly CollectionName[] | 'all',
  ): Promise<number> {
    let caughtUp = 0;
    for (let attempt = 1; attempt <= MAX_SWAP_ATTEMPTS; attempt++) {
      if (this.live.adopt(generation as MemoryReadStore, this.checkpointName, collections)) {
        await this.live.oldModelsGone();
        return caughtUp;
      }
      // The live models applied events the generation has not seen yet: replay those first.
      const tail = await catchUp(generation, position, this.checkpointName);
      caughtUp += tail.events;
      position = tail.position;
    }
    throw new Error(
      `The rebuild could not catch up with the live read models in ${MAX_SWAP_ATTEMPTS} rounds`,
    );
  }

  discard(generation: ReadStore): Promise<void> {
    return generation.close();
  }
}
