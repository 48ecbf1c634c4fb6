import { comparePositions, Position, positionKey } from '@chronicle/event-store';
import {
  AnyBulkWriteOperation,
  Collection,
  Db,
  Long,
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  ReadConcernLevel,
  WriteConcernSettings,
  type WriteError,
} from 'mongodb';

import {
  Checkpoint,
  CollectionName,
  Collections,
  CustomerDocument,
  CustomerListQuery,
  CustomerPage,
  DocumentChange,
  ReadStore,
  UserDocument,
} from '../read-store.port';
import { validateChanges, validateListQuery, validatePosition } from '../read-store-validation';

export interface MongoReadStoreOptions {
  /** Database to use; defaults to the one named in the URI's path, else `chronicle`. */
  dbName?: string;
  /**
   * Defaults to `{ w: 'majority' }`: a batch and its checkpoint are acknowledged only once a
   * majority holds them, so a failover can never roll back a checkpoint past documents it covers.
   */
  writeConcern?: WriteConcernSettings;
  /**
   * Defaults to `majority`: readers only see documents that survive a failover, so a customer
   * listed once cannot vanish again after a rollback. `local` reads the primary's latest writes
   * with less latency, at the cost of possibly showing data a failover then rolls back.
   */
  readConcern?: ReadConcernLevel;
  /**
   * Prefixes the collection names: a rebuild or a verify builds into `<prefix>customers` etc.
   * beside the live collections, and promote() renames them over the live ones.
   */
  collectionPrefix?: string;
}

/** Fields of the stored documents beyond the port's: `_id` is the document id. */
interface Guarded {
  /** positionKey() of the last change applied: the guard that makes re-application harmless. */
  pos: string;
}
type CustomerRecord = Guarded & Partial<Omit<CustomerDocument, 'id'>> & { _id: number | Long };
type UserRecord = Guarded & Partial<Omit<UserDocument, 'id'>> & { _id: string };
interface CheckpointRecord {
  _id: string;
  commit: string;
  prepare: string;
}

const COLLECTIONS = ['customers', 'users', 'checkpoints'] as const;
const CUSTOMER_FIELDS = ['name', 'email', 'createdon'] as const;
const USER_FIELDS = ['name', 'age', 'createdon', 'modifiedon'] as const;
const DUPLICATE_KEY = 11000;
const ID_INDEX_MESSAGE = / index: _id_ dup key: /;
const NAMESPACE_EXISTS = 48;
const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);

/** One document's changes of a batch, in order, each at a later position than the one before. */
interface DocumentChanges {
  collection: CollectionName;
  id: number | string;
  changes: DocumentChange[];
}

/**
 * The ReadStore port on MongoDB. Each document carries the position of the last change applied
 * to it (`pos`), and every write is an upsert guarded by it, so replaying events (after a crash
 * between a batch and its checkpoint, or from a second projector) changes nothing.
 */
export class MongoReadStore extends ReadStore {
  private closed = false;
  private readonly customers: Collection<CustomerRecord>;
  private readonly users: Collection<UserRecord>;
  private readonly checkpoints: Collection<CheckpointRecord>;

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    private readonly prefix: string,
  ) {
    super();
    this.customers = db.collection<CustomerRecord>(`${prefix}customers`);
    this.users = db.collection<UserRecord>(`${prefix}users`);
    this.checkpoints = db.collection<CheckpointRecord>(`${prefix}checkpoints`);
  }

  static async connect(uri: string, options: MongoReadStoreOptions = {}): Promise<MongoReadStore> {
    const client = new MongoClient(uri, {
      writeConcern: options.writeConcern ?? { w: 'majority' },
      readConcern: { level: options.readConcern ?? 'majority' },
      // A field set to undefined means "not set" in a change, not null.
      ignoreUndefined: true,
    });
    await client.connect();
    const store = new MongoReadStore(
      client,
      client.db(options.dbName ?? databaseFromUri(uri) ?? 'chronicle'),
      options.collectionPrefix ?? '',
    );
    try {
      await store.createCollections();
    } catch (error) {
      await client.close();
      throw error;
    }
    return store;
  }

  async applyBatch(changes: DocumentChange[], checkpoint: Checkpoint): Promise<void> {
    this.assertOpen();
    validateChanges(changes);
    validatePosition(checkpoint.position, 'checkpoint position');
    const documents = groupByDocument(changes);

    // One write per document, guarded by its first change's position: when the document is
    // older than all of the batch's changes to it (the usual case) this equals applying them in
    // order, in a single round trip.
    const rejected = await this.write(documents.map((doc) => mergedWrite(doc)));

    // A document that refused the merged write already holds some of these changes (a replay)
    // or was created concurrently: apply its changes one at a time, each guarded by its own
    // position. The k-th changes of all such documents go in one round, rounds in order.
    const retry = rejected.map((at) => documents[at]);
    for (let round = 0; retry.some((doc) => doc.changes.length > round); round++) {
      await this.write(
        retry.filter((doc) => doc.changes.length > round).map((doc) => guardedWrite(doc, round)),
      );
    }

    await this.checkpoints.updateOne(
      { _id: checkpoint.projection },
      {
        $set: {
          commit: checkpoint.position.commit.toString(),
          prepare: checkpoint.position.prepare.toString(),
        },
      },
      { upsert: true },
    );
  }

  async getCheckpoint(projection: string): Promise<Position | null> {
    this.assertOpen();
    const record = await this.checkpoints.findOne({ _id: projection });
    return record ? { commit: BigInt(record.commit), prepare: BigInt(record.prepare) } : null;
  }

  async listCustomers(query: CustomerListQuery): Promise<CustomerPage> {
    this.assertOpen();
    validateListQuery(query);
    const range: { $gt?: number; $lt?: number } = {};
    if (query.gt !== undefined) range.$gt = query.gt;
    if (query.lt !== undefined) range.$lt = query.lt;
    const filter = query.gt === undefined && query.lt === undefined ? {} : { _id: range };
    // Both read the `_id` index. They are two reads, so a projection writing in between can make
    // the total and the page disagree by the documents it just created.
    const [records, total] = await Promise.all([
      // limit(0) means "no limit" to MongoDB, but an empty page to the port.
      query.limit === 0
        ? Promise.resolve([])
        : this.customers.find(filter).sort({ _id: 1 }).skip(query.offset).limit(query.limit).toArray(),
      this.customers.countDocuments(filter),
    ]);
    return { items: records.map(customerView), total };
  }

  async getUser(id: string): Promise<UserDocument | null> {
    this.assertOpen();
    const record = await this.users.findOne({ _id: id });
    return record ? userView(record) : null;
  }

  async *documents<C extends CollectionName>(collection: C): AsyncGenerator<Collections[C]['doc']> {
    this.assertOpen();
    if (collection === 'customers') {
      for await (const record of this.customers.find({}).sort({ _id: 1 })) {
        yield customerView(record);
      }
    } else {
      for await (const record of this.users.find({}).sort({ _id: 1 })) {
        yield userView(record);
      }
    }
  }

  /**
   * Renames this store's document collections over the live (unprefixed) ones, replacing them,
   * and drops its own checkpoints; the store is closed afterwards. Each rename is atomic, so a
   * reader sees a whole old or a whole new collection.
   */
  async promote(): Promise<void> {
    this.assertPrefixed();
    for (const collection of [this.customers, this.users]) {
      const live = collection.collectionName.slice(this.prefix.length);
      await this.db.renameCollection(collection.collectionName, live, { dropTarget: true });
    }
    await this.checkpoints.drop();
    await this.close();
  }

  /** Drops this store's collections (a scratch copy or an abandoned rebuild) and closes it. */
  async drop(): Promise<void> {
    this.assertPrefixed();
    for (const name of COLLECTIONS) await this.db.dropCollection(`${this.prefix}${name}`);
    await this.close();
  }

  async ping(): Promise<void> {
    this.assertOpen();
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client.close();
  }

  /**
   * Creates the collections up front, so a missing permission or an unreachable server shows at
   * start-up rather than at the first event. No secondary index: the `_id` index serves both
   * the guard's lookup and listCustomers' range scan, and any other index would slow every write.
   */
  private async createCollections(): Promise<void> {
    const existing = new Set(
      (await this.db.listCollections({}, { nameOnly: true }).toArray()).map((info) => info.name),
    );
    for (const name of COLLECTIONS.map((collection) => `${this.prefix}${collection}`)) {
      if (existing.has(name)) continue;
      try {
        await this.db.createCollection(name);
      } catch (error) {
        // Another process created it first.
        if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
      }
    }
  }

  /**
   * Runs guarded upserts, unordered (each touches a different document). Returns the indexes of
   * the writes refused with a duplicate `_id`: the guard did not match an existing document.
   */
  private async write(writes: Array<{ collection: CollectionName; op: GuardedUpsert }>): Promise<number[]> {
    const rejected: number[] = [];
    await Promise.all(
      (['customers', 'users'] as const).map(async (name) => {
        const indexes = writes.flatMap((write, at) => (write.collection === name ? [at] : []));
        if (indexes.length === 0) return;
        const collection = (name === 'customers'
          ? this.customers
          : this.users) as unknown as Collection<Guarded>;
        const ops = indexes.map((at) => writes[at].op as AnyBulkWriteOperation<Guarded>);
        try {
          await collection.bulkWrite(ops, { ordered: false });
        } catch (error) {
          for (const at of duplicateIdWrites(error)) rejected.push(indexes[at]);
        }
      }),
    );
    return rejected.sort((a, b) => a - b);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The read store is closed');
  }

  /** The live collections are never renamed away or dropped. */
  private assertPrefixed(): void {
    this.assertOpen();
    if (this.prefix === '') throw new Error('Only a prefixed generation can be promoted or dropped');
  }
}

interface GuardedUpsert {
  updateOne: {
    filter: { _id: number | string | Long; pos: { $lt: string } };
    update: { $set: Record<string, unknown> };
    upsert: true;
  };
}

/**
 * The indexes of writes refused by a duplicate `_id`; rethrows any other failure. The driver
 * keeps only code and message of a bulk write error, so the index is read from the server's
 * message ("E11000 duplicate key error collection: db.customers index: _id_ dup key: ...").
 */
function duplicateIdWrites(error: unknown): number[] {
  if (!(error instanceof MongoBulkWriteError) || error.result.getWriteConcernError()) throw error;
  // One WriteError or several, depending on how many writes failed.
  const writeErrors = ([] as WriteError[]).concat(error.writeErrors);
  if (writeErrors.length === 0) throw error;
  return writeErrors.map((writeError) => {
    if (writeError.code !== DUPLICATE_KEY || !ID_INDEX_MESSAGE.test(writeError.errmsg ?? '')) throw error;
    return writeError.index;
  });
}

/**
 * Groups a batch's changes by document, keeping their order and dropping any change at or before
 * the position of an earlier change to the same document: applied in order, it would be refused.
 */
function groupByDocument(changes: DocumentChange[]): DocumentChanges[] {
  const documents = new Map<string, DocumentChanges>();
  for (const change of changes) {
    const key = `${change.collection}:${typeof change.id}:${change.id}`;
    let doc = documents.get(key);
    if (!doc) {
      doc = { collection: change.collection, id: change.id, changes: [] };
      documents.set(key, doc);
    }
    const last = doc.changes.at(-1);
    if (!last || comparePositions(change.position, last.position) > 0) doc.changes.push(change);
  }
  return [...documents.values()];
}

function storedId(doc: DocumentChanges): number | string | Long {
  // Customer ids beyond int32 are stored as int64, not double: an integer id stays an integer.
  if (typeof doc.id === 'number' && (doc.id > INT32_MAX || doc.id < INT32_MIN))
    return Long.fromNumber(doc.id);
  return doc.id;
}

function fieldsOf(change: DocumentChange): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(change.set)) {
    if (field !== 'id' && value !== undefined) fields[field] = value;
  }
  return fields;
}

function upsert(doc: DocumentChanges, guard: Position, fields: Record<string, unknown>, last: Position) {
  return {
    collection: doc.collection,
    op: {
      updateOne: {
        filter: { _id: storedId(doc), pos: { $lt: positionKey(guard) } },
        update: { $set: { ...fields, pos: positionKey(last) } },
        upsert: true,
      },
    } satisfies GuardedUpsert,
  };
}

function mergedWrite(doc: DocumentChanges) {
  const fields = Object.assign({}, ...doc.changes.map(fieldsOf)) as Record<string, unknown>;
  return upsert(doc, doc.changes[0].position, fields, doc.changes.at(-1)!.position);
}

function guardedWrite(doc: DocumentChanges, at: number) {
  const change = doc.changes[at];
  return upsert(doc, change.position, fieldsOf(change), change.position);
}

/** The port's document: known fields only, in the port's order, so nothing internal leaks. */
function customerView(record: CustomerRecord): CustomerDocument {
  const view: Record<string, unknown> = { id: Number(record._id) };
  for (const field of CUSTOMER_FIELDS) if (record[field] !== undefined) view[field] = record[field];
  return view as unknown as CustomerDocument;
}

function userView(record: UserRecord): UserDocument {
  const view: Record<string, unknown> = { id: record._id };
  for (const field of USER_FIELDS) if (record[field] !== undefined) view[field] = record[field];
  return view as unknown as UserDocument;
}

/** The database named in a connection string's path (`mongodb://host/name?...`), if any. */
export function databaseFromUri(uri: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]+)/.exec(uri);
  return match ? decodeURIComponent(match[1]) : undefined;
}
