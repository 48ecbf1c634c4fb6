import { pickCustomerFields } from '@chronicle/domain';
import { databaseFromUri, MONGO_DEADLINES, Position, StoreReplacedError } from '@chronicle/event-store';
import { duplicateIdWrites, mongoClient } from '@chronicle/event-store/mongo';
import {
  AnyBulkWriteOperation,
  Collection,
  Db,
  type Filter,
  Long,
  MongoClient,
  MongoServerError,
  ReadConcernLevel,
  WriteConcernSettings,
} from 'mongodb';

import {
  Checkpoint,
  CollectionName,
  Collections,
  CustomerDocument,
  CustomerListQuery,
  CustomerPage,
  DocumentChange,
  PageQuery,
  ReadStore,
  USER_DOCUMENT_FIELDS,
  UserDocument,
  UserPage,
} from '../read-store.port';
import { validateChanges, validateListQuery, validatePosition } from '../read-store-validation';
import {
  groupByDocument,
  GuardedDelete,
  GuardedUpsert,
  guardedDelete,
  guardedWrite,
  mergedWrite,
} from './guarded-writes';
import {
  adoptGeneration,
  CheckpointRecord,
  DOCUMENT_COLLECTIONS,
  finishPendingPromotion,
  generationOf,
  promoteGeneration,
} from './mongo-generations';

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

const COLLECTIONS = ['customers', 'users', 'checkpoints'] as const;
/** GET /users' order; the index is declared once and created on every generation. */
const USERS_BY_CREATEDON = { key: { createdon: 1, _id: 1 }, name: 'createdon_1__id_1' } as const;
const NAMESPACE_EXISTS = 48;
/**
 * The server killed a reader's cursor: CursorNotFound, QueryPlanKilled (its collection was dropped
 * or renamed, as a rebuild's swap does), CursorKilled. The read can simply be made again.
 */
const CURSOR_INVALIDATED = new Set([43, 175, 237]);

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
  private generation: string | null = null;

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
    const client = mongoClient(uri, {
      writeConcern: options.writeConcern ?? { w: 'majority' },
      readConcern: { level: options.readConcern ?? 'majority' },
      ...MONGO_DEADLINES,
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
      // A promotion interrupted by a crash is finished before anyone reads the live collections.
      if (store.prefix === '') await finishPendingPromotion(store.db);
      await store.createCollections();
      store.generation = await adoptGeneration(store.checkpoints);
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
    const current = await generationOf(this.checkpoints);
    if (this.generation === null || current !== this.generation) {
      this.generation = null;
      throw new StoreReplacedError(
        'The MongoDB read models were wiped or replaced since their checkpoint was read: reading it again',
      );
    }
    const documents = groupByDocument(changes);

    // Deletions first, each guarded by its position like every write: a replay deletes nothing newer.
    const removals = documents.filter((doc) => doc.removedAt !== null);
    if (removals.length > 0) await this.write(removals.map((doc) => guardedDelete(doc)));

    // One write per document, guarded by its first change's position: when the document is
    // older than all of the batch's changes to it (the usual case) this equals applying them in
    // order, in a single round trip.
    const withChanges = documents.filter((doc) => doc.changes.length > 0);
    const rejected = await this.write(withChanges.map((doc) => mergedWrite(doc)));

    // A document that refused the merged write already holds some of these changes (a replay)
    // or was created concurrently: apply its changes one at a time, each guarded by its own
    // position. The k-th changes of all such documents go in one round, rounds in order.
    const retry = rejected.map((at) => withChanges[at]);
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
    this.generation = await adoptGeneration(this.checkpoints);
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
    const [records, total] = await readingAgain(() =>
      Promise.all([
        // limit(0) means "no limit" to MongoDB, but an empty page to the port.
        query.limit === 0
          ? Promise.resolve([])
          : this.customers.find(filter).sort({ _id: 1 }).skip(query.offset).limit(query.limit).toArray(),
        this.customers.countDocuments(filter),
      ]),
    );
    return { items: records.map(customerView), total };
  }

  async listUsers(query: PageQuery): Promise<UserPage> {
    this.assertOpen();
    validateListQuery(query);
    // The page walks the createdon index. The total is the collection's count from its metadata,
    // which, unlike countDocuments, costs the same however many users there are.
    const [records, total] = await readingAgain(() =>
      Promise.all([
        query.limit === 0
          ? Promise.resolve([])
          : this.users
              .find({})
              .sort(USERS_BY_CREATEDON.key)
              .hint(USERS_BY_CREATEDON.name)
              .skip(query.offset)
              .limit(query.limit)
              .toArray(),
        this.users.estimatedDocumentCount(),
      ]),
    );
    return { items: records.map(userView), total };
  }

  async getUser(id: string): Promise<UserDocument | null> {
    this.assertOpen();
    const record = await readingAgain(() => this.users.findOne({ _id: id }));
    return record ? userView(record) : null;
  }

  async *documents<C extends CollectionName>(collection: C): AsyncGenerator<Collections[C]['doc']> {
    this.assertOpen();
    if (collection === 'customers') yield* resumableScan(this.customers, customerView);
    else yield* resumableScan(this.users, userView);
  }

  /**
   * Renames this store's document collections over the live (unprefixed) ones, replacing them
   * and keeping the live ones' indexes, and drops its own checkpoints. Each rename is atomic, so
   * a reader sees a whole old or a whole new collection; the two renames are not atomic together,
   * so the promotion is journalled first, and an interrupted one is finished by the next connect
   * to the live store (or the next promote). `collections`: only those (a rebuild of some
   * projections); the generation's others are dropped.
   */
  async promote(collections: readonly CollectionName[] = DOCUMENT_COLLECTIONS): Promise<void> {
    this.assertPrefixed();
    await promoteGeneration(this.db, this.prefix, collections);
  }

  /**
   * Drops what is left of this store's collections (a scratch copy, an abandoned rebuild) and
   * closes it. A closed store has nothing left to drop: it was promoted, or dropped already.
   */
  async drop(): Promise<void> {
    if (this.closed) return;
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
   * start-up rather than at the first event. The `_id` index serves the guard's lookup and
   * listCustomers' range scan; the one secondary index orders users for listUsers (a user is
   * written once per registration or patch, a customer far more often, so customers get none).
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
    await this.users.createIndex(USERS_BY_CREATEDON.key, { name: USERS_BY_CREATEDON.name });
  }

  /**
   * Runs guarded upserts, unordered (each touches a different document). Returns the indexes of
   * the writes refused with a duplicate `_id`: the guard did not match an existing document.
   */
  private async write(
    writes: Array<{ collection: CollectionName; op: GuardedUpsert | GuardedDelete }>,
  ): Promise<number[]> {
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

/** Runs a read once more when the server killed its cursor under it. */
async function readingAgain<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!isCursorInvalidated(error)) throw error;
    return read();
  }
}

function isCursorInvalidated(error: unknown): boolean {
  return error instanceof MongoServerError && CURSOR_INVALIDATED.has(Number(error.code));
}

/** Every document in `_id` order; a killed cursor is reopened once after the last `_id` read. */
async function* resumableScan<R extends { _id: unknown }, V>(
  collection: Collection<R>,
  view: (record: R) => V,
): AsyncGenerator<V> {
  let last: unknown;
  let reopened = false;
  for (;;) {
    const filter = (last === undefined ? {} : { _id: { $gt: last } }) as Filter<R>;
    try {
      for await (const record of collection.find(filter).sort({ _id: 1 })) {
        last = (record as R)._id;
        yield view(record as R);
      }
      return;
    } catch (error) {
      if (reopened || !isCursorInvalidated(error)) throw error;
      reopened = true;
    }
  }
}

/** The port's document: known fields only, in the port's order, so nothing internal leaks. */
function customerView(record: CustomerRecord): CustomerDocument {
  return { id: Number(record._id), ...pickCustomerFields(record) } as CustomerDocument;
}

function userView(record: UserRecord): UserDocument {
  const view: Record<string, unknown> = { id: record._id };
  for (const field of USER_DOCUMENT_FIELDS) if (record[field] !== undefined) view[field] = record[field];
  return view as unknown as UserDocument;
}
