import type { AnyBulkWriteOperation, Collection, Document, MongoClient } from 'mongodb';
import { Position, positionKey } from '../../position';
import { CheckpointStore, ParkedMessage } from '../checkpoint-store.port';
import { duplicateIdWrites } from './guarded-writes';
import { mongoClient } from './mongo-client';
import { MONGO_DEADLINES } from './mongo-database';

interface CheckpointRecord {
  _id: string;
  commit: string;
  prepare: string;
  /** positionKey() of the checkpoint, on those stored with a state: the guard of storeState. */
  pos?: string;
}

interface StateRecord {
  _id: string;
  processor: string;
  key: string;
  value: unknown;
  /** positionKey() of the checkpoint it was stored with. */
  pos: string;
}

interface ParkedRecord extends Omit<ParkedMessage, 'position'> {
  _id: string;
  commit: string;
  prepare: string;
  /** Sorts like the position (fixed width). */
  order: string;
}

/** Checkpoints and parked messages in MongoDB, beside the read models (production). */
export class MongoCheckpointStore extends CheckpointStore {
  private readonly checkpoints: Collection<CheckpointRecord>;
  private readonly parkedMessages: Collection<ParkedRecord>;
  private readonly processorState: Collection<StateRecord>;

  private constructor(
    private readonly client: MongoClient,
    dbName: string,
  ) {
    super();
    const db = client.db(dbName);
    this.checkpoints = db.collection<CheckpointRecord>('processor_checkpoints');
    this.parkedMessages = db.collection<ParkedRecord>('parked_messages');
    this.processorState = db.collection<StateRecord>('processor_state');
  }

  static async connect(uri: string, dbName: string): Promise<MongoCheckpointStore> {
    const client = mongoClient(uri, {
      writeConcern: { w: 'majority' },
      readConcern: { level: 'majority' },
      ...MONGO_DEADLINES,
    });
    await client.connect();
    return new MongoCheckpointStore(client, dbName);
  }

  async load(processor: string): Promise<Position | null> {
    const record = await this.checkpoints.findOne({ _id: processor });
    return record ? { commit: BigInt(record.commit), prepare: BigInt(record.prepare) } : null;
  }

  async store(processor: string, position: Position): Promise<void> {
    await this.checkpoints.updateOne(
      { _id: processor },
      { $set: { commit: position.commit.toString(), prepare: position.prepare.toString() } },
      { upsert: true },
    );
  }

  async loadState(processor: string): Promise<Map<string, unknown>> {
    const records = await this.processorState.find({ processor }).toArray();
    return new Map(records.map((record) => [record.key, record.value]));
  }

  // The entries, then the checkpoint, each refused where a later position was stored already.
  async storeState(
    processor: string,
    position: Position,
    changes: ReadonlyMap<string, unknown>,
  ): Promise<void> {
    const pos = positionKey(position);
    const writes = [...changes].map(([key, value]) =>
      value === null
        ? { deleteOne: { filter: { _id: `${processor}:${key}`, pos: { $lte: pos } } } }
        : {
            updateOne: {
              filter: { _id: `${processor}:${key}`, pos: { $lte: pos } },
              update: { $set: { processor, key, value, pos } },
              upsert: true,
            },
          },
    );
    if (writes.length > 0) await this.guarded(this.processorState, writes);
    await this.guarded(this.checkpoints, [
      {
        updateOne: {
          filter: { _id: processor, pos: { $lte: pos } },
          update: { $set: { commit: position.commit.toString(), prepare: position.prepare.toString(), pos } },
          upsert: true,
        },
      },
    ]);
  }

  /** Guarded upserts, unordered: one refused because a later one was stored is not a failure. */
  private async guarded<T extends Document>(
    collection: Collection<T>,
    writes: Array<AnyBulkWriteOperation<T>>,
  ): Promise<void> {
    try {
      await collection.bulkWrite(writes, { ordered: false });
    } catch (error) {
      duplicateIdWrites(error);
    }
  }

  async park(message: ParkedMessage): Promise<void> {
    const { position, ...rest } = message;
    await this.parkedMessages.replaceOne(
      { _id: `${message.processor}:${message.eventId}` },
      {
        ...rest,
        commit: position.commit.toString(),
        prepare: position.prepare.toString(),
        order: position.commit.toString().padStart(20, '0'),
      },
      { upsert: true },
    );
  }

  async parked(processor?: string): Promise<ParkedMessage[]> {
    const records = await this.parkedMessages
      .find(processor === undefined ? {} : { processor })
      .sort({ order: 1, processor: 1 })
      .toArray();
    return records.map(({ _id, commit, prepare, order: _order, ...rest }) => ({
      ...rest,
      position: { commit: BigInt(commit), prepare: BigInt(prepare) },
    }));
  }

  async unpark(processor: string, eventId: string): Promise<boolean> {
    const result = await this.parkedMessages.deleteOne({ _id: `${processor}:${eventId}` });
    return result.deletedCount > 0;
  }

  // The state first: a crash in between leaves no state without its checkpoint to replay after.
  async reset(processor: string): Promise<void> {
    await this.processorState.deleteMany({ processor });
    await this.checkpoints.deleteOne({ _id: processor });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
