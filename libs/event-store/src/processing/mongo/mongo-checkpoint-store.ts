import { Collection, MongoClient } from 'mongodb';
import { Position } from '../../position';
import { CheckpointStore, ParkedMessage } from '../checkpoint-store.port';
import { MONGO_DEADLINES } from './mongo-database';

interface CheckpointRecord {
  _id: string;
  commit: string;
  prepare: string;
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

  private constructor(
    private readonly client: MongoClient,
    dbName: string,
  ) {
    super();
    const db = client.db(dbName);
    this.checkpoints = db.collection<CheckpointRecord>('processor_checkpoints');
    this.parkedMessages = db.collection<ParkedRecord>('parked_messages');
  }

  static async connect(uri: string, dbName: string): Promise<MongoCheckpointStore> {
    const client = new MongoClient(uri, {
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

  async close(): Promise<void> {
    await this.client.close();
  }
}
