import { randomUUID } from 'node:crypto';
import { Position } from '@chronicle/event-store';
import { CollectionName, ReadStore } from '../read-store.port';
import { CatchUp, RebuildTarget } from '../rebuild/rebuild-target';
import { MongoReadStore } from './mongo-read-store';

/**
 * MongoDB: new collections beside the live ones, renamed over them (renameCollection with
 * dropTarget). A projector may apply events to the old collections until the rename: everything
 * after the generation's position is then applied again to the new ones (guarded by document
 * positions, so applying twice is harmless).
 */
export class MongoRebuildTarget implements RebuildTarget {
  constructor(
    readonly live: MongoReadStore,
    private readonly uri: string,
    private readonly dbName?: string,
  ) {}

  async create(purpose: 'rebuild' | 'verify'): Promise<ReadStore> {
    const prefix = `${purpose}_${randomUUID().slice(0, 8)}_`;
    return MongoReadStore.connect(this.uri, { dbName: this.dbName, collectionPrefix: prefix });
  }

  async swapIn(
    generation: ReadStore,
    position: Position | null,
    catchUp: CatchUp,
    collections: readonly CollectionName[] | 'all',
  ): Promise<number> {
    await (generation as MongoReadStore).promote(collections === 'all' ? undefined : collections);
    await generation.close();
    // Its own checkpoint name: the projector's checkpoint stays the projector's.
    return (await catchUp(this.live, position, 'rebuild-catch-up')).events;
  }

  discard(generation: ReadStore): Promise<void> {
    return (generation as MongoReadStore).drop();
  }
}
