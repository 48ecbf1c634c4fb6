import {
  Binary,
  type Collection,
  MongoBulkWriteError,
  type MongoClient,
  MongoServerError,
  type WriteError,
} from 'mongodb';
import { DUPLICATE_KEY } from '../processing/mongo/guarded-writes';
import { mongoClient } from '../processing/mongo/mongo-client';
import { databaseFromUri, MONGO_DEADLINES } from '../processing/mongo/mongo-database';
import {
  DataKeyStore,
  DataSubject,
  Erasure,
  SubjectKey,
  SubjectKind,
  subjectName,
} from './data-key-store.port';
import { DataKeyWrapper } from './data-key-wrapper';

const COLLECTION = 'data_keys';
/** The document recording which secret the keys are wrapped under (no subject's name starts with #). */
const SECRET_CHECK = '#secret-check';

interface KeyDocument {
  /** subjectName(). */
  _id: string;
  kind: SubjectKind;
  id: string;
  /** The wrapped key, while the subject is not erased. */
  wrapped?: Binary;
  /** RFC 3339, once erased. */
  erasedAt?: string;
  /** When the key was destroyed (this instance's clock), for destroyedSince(). */
  destroyedAt?: Date;
}

interface CheckDocument {
  _id: typeof SECRET_CHECK;
  check: string;
}

/**
 * Data keys of the production shape, in MongoDB's `data_keys`, shared by every instance: a key is
 * a document named by its subject, made by an insert (so two instances never make two keys for
 * one subject), and an erasure replaces the key with its record in one update. Writes wait for a
 * majority and the journal, and reads see only what a majority holds, so neither a key that
 * events were written under nor an erasure is lost to a failover.
 */
export class MongoDataKeyStore extends DataKeyStore {
  private readonly client: MongoClient;
  private readonly keys: Collection<KeyDocument>;
  private readonly wrapper: DataKeyWrapper;
  private readonly where: string;
  private checked: Promise<void> | null = null;

  constructor(uri: string, secret: Uint8Array) {
    super();
    this.client = mongoClient(uri, {
      writeConcern: { w: 'majority', journal: true },
      readConcern: { level: 'majority' },
      ...MONGO_DEADLINES,
    });
    const database = databaseFromUri(uri) ?? 'chronicle';
    this.keys = this.client.db(database).collection<KeyDocument>(COLLECTION);
    this.where = `MongoDB's ${database}.${COLLECTION}`;
    this.wrapper = new DataKeyWrapper(secret);
  }

  async createMany(subjects: readonly DataSubject[]): Promise<Map<string, SubjectKey>> {
    const made = new Map<string, SubjectKey>();
    const documents: KeyDocument[] = [];
    for (const { kind, id } of subjects) {
      const name = subjectName({ kind, id });
      if (made.has(name)) continue;
      const key = DataKeyWrapper.newKey();
      made.set(name, { state: 'active', key });
      documents.push({ _id: name, kind, id, wrapped: new Binary(this.wrapper.wrap(name, key)) });
    }
    if (documents.length === 0) return made;
    await this.opened();
    const kept = new Set<string>();
    try {
      // Unordered: every new subject is inserted, whatever the others meet.
      await this.keys.insertMany(documents, { ordered: false });
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const errors: WriteError[] = ([] as WriteError[]).concat(error.writeErrors);
      // Only keys found made before are taken from the store; anything else (an outage reported
      // with no write error at all) fails the call: a key never stored is never handed out.
      const accounted = error.insertedCount + errors.length === documents.length;
      if (!accounted || errors.some((writeError) => writeError.code !== DUPLICATE_KEY)) throw error;
      for (const writeError of errors) kept.add(documents[writeError.index]._id);
    }
    if (kept.size > 0) {
      // Made before, here or by another instance, or erased: never replaced.
      const held = await this.keys.find({ _id: { $in: [...kept] } }).toArray();
      for (const document of held) made.set(document._id, this.keyOf(document));
      const lost = [...kept].filter((name) => !held.some((document) => document._id === name));
      if (lost.length > 0) throw new Error(`The data keys of ${lost.join(', ')} were neither made nor found`);
    }
    return made;
  }

  async getMany(subjects: readonly DataSubject[]): Promise<Map<string, SubjectKey>> {
    await this.opened();
    const held = await this.keys.find({ _id: { $in: subjects.map(subjectName) } }).toArray();
    return new Map(held.map((document) => [document._id, this.keyOf(document)]));
  }

  async destroy(erasure: Erasure): Promise<Erasure> {
    await this.opened();
    const { kind, id } = erasure.subject;
    const name = subjectName(erasure.subject);
    try {
      // One update: the key goes and the erasure takes its place, or neither; a subject without a
      // key gets its erasure inserted. An erased subject's record is never matched, so never changed.
      await this.keys.updateOne(
        { _id: name, erasedAt: { $exists: false } },
        { $set: { kind, id, erasedAt: erasure.erasedAt, destroyedAt: new Date() }, $unset: { wrapped: '' } },
        { upsert: true },
      );
      return { subject: { kind, id }, erasedAt: erasure.erasedAt };
    } catch (error) {
      // The upsert met the record of an erasure already made: that one is kept.
      if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
    }
    const held = await this.keys.findOne({ _id: name });
    const state = held === null ? null : this.keyOf(held);
    if (state?.state !== 'erased') throw new Error(`The erasure of ${name} was neither made nor found`);
    return state.erasure;
  }

  async erasures(after: string | null, limit: number): Promise<Erasure[]> {
    const held = await this.keys
      .find({ _id: { $gt: after ?? '' }, erasedAt: { $exists: true } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return held.map(erasureOf);
  }

  async destroyedSince(since: Date, limit: number): Promise<Erasure[]> {
    await this.opened();
    const held = await this.keys
      .find({ destroyedAt: { $gte: since } })
      .sort({ destroyedAt: 1 })
      .limit(limit)
      .toArray();
    return held.map(erasureOf);
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private keyOf(document: KeyDocument): SubjectKey {
    if (document.erasedAt !== undefined) return { state: 'erased', erasure: erasureOf(document) };
    return { state: 'active', key: this.wrapper.unwrap(document._id, Buffer.from(document.wrapped!.buffer)) };
  }

  /**
   * At the first use of the collection, once per client: records the secret's check, then
   * compares it; and makes the index destroyedSince() reads.
   */
  private opened(): Promise<void> {
    this.checked ??= (async () => {
      const checks = this.keys as unknown as Collection<CheckDocument>;
      try {
        await checks.insertOne({ _id: SECRET_CHECK, check: this.wrapper.check });
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
      }
      const stored = await checks.findOne({ _id: SECRET_CHECK });
      this.wrapper.verify(stored?.check ?? '', this.where);
      // Every instance polls destroyedSince() each second: never a scan of every key.
      await this.keys.createIndex(
        { destroyedAt: 1 },
        { name: 'data_keys_destroyed', partialFilterExpression: { destroyedAt: { $exists: true } } },
      );
    })().catch((error: unknown) => {
      this.checked = null;
      throw error;
    });
    return this.checked;
  }
}

function erasureOf(document: KeyDocument): Erasure {
  return { subject: { kind: document.kind, id: document.id }, erasedAt: document.erasedAt! };
}
