import { type Collection, type MongoClient, MongoServerError } from 'mongodb';
import { databaseFromUri } from '@chronicle/event-store';
import { mongoClient } from '@chronicle/event-store/mongo';
import { Claim, IDEMPOTENCY_WINDOW_MS, IdempotencyStore, isExpired, KeyRecord } from './idempotency-store';

interface KeyDocument extends Omit<KeyRecord, 'after'> {
  _id: { scope: string; key: string };
  /** Absent on records from before it was kept. */
  after?: string | null;
}

const COLLECTION = 'idempotency_keys';
const DUPLICATE_KEY = 11000;
const BY_SCOPE = { '_id.scope': 1, started: -1 } as const;

function document(claim: Claim): KeyDocument {
  return {
    _id: { scope: claim.scope, key: claim.key },
    fingerprint: claim.fingerprint,
    owner: claim.owner,
    started: claim.now,
    response: null,
    after: claim.after,
  };
}

/**
 * Idempotency-Key records of the production shape, in MongoDB, shared by every API instance: a
 * claim is an insert keyed by (account, key), so two instances never both take a key. Expired
 * records are deleted by prune (no TTL index: not every deployment's user may create one).
 */
export class MongoIdempotencyStore extends IdempotencyStore {
  private readonly client: MongoClient;
  private readonly keys: Collection<KeyDocument>;
  private indexed: Promise<unknown> | null = null;

  constructor(uri: string) {
    super();
    this.client = mongoClient(uri, { writeConcern: { w: 'majority' }, serverSelectionTimeoutMS: 5_000 });
    this.keys = this.client.db(databaseFromUri(uri) ?? 'chronicle').collection<KeyDocument>(COLLECTION);
  }

  async claim(claim: Claim): Promise<KeyRecord | null> {
    const _id = { scope: claim.scope, key: claim.key };
    const ours = document(claim);
    for (;;) {
      try {
        await this.keys.insertOne(ours);
        return null;
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
      }
      const held = await this.keys.findOne({ _id });
      if (held === null) continue;
      if (!isExpired(held, claim.now)) {
        const { fingerprint, started, response, owner, after } = held;
        return { fingerprint, started, response, owner, after: after ?? null };
      }
      // Expired: taken over, unless another claim took it over first.
      const taken = await this.keys.replaceOne({ _id, owner: held.owner }, ours);
      if (taken.modifiedCount === 1) return null;
    }
  }

  async takeOver(claim: Claim, from: string): Promise<boolean> {
    const _id = { scope: claim.scope, key: claim.key };
    const taken = await this.keys.replaceOne({ _id, owner: from, response: null }, document(claim));
    return taken.modifiedCount === 1;
  }

  async complete(scope: string, key: string, owner: string, response: string): Promise<void> {
    await this.keys.updateOne({ _id: { scope, key }, owner }, { $set: { response } });
  }

  async release(scope: string, key: string, owner: string): Promise<void> {
    await this.keys.deleteOne({ _id: { scope, key }, owner, response: null });
  }

  async trim(scope: string, keep: number): Promise<void> {
    await this.indexes();
    const [oldestKept] = await this.keys
      .find({ '_id.scope': scope })
      .sort(BY_SCOPE)
      .skip(keep - 1)
      .limit(1)
      .project<{ started: number }>({ started: 1 })
      .toArray();
    if (oldestKept) await this.keys.deleteMany({ '_id.scope': scope, started: { $lt: oldestKept.started } });
  }

  async prune(now: number): Promise<void> {
    await this.indexes();
    await this.keys.deleteMany({ started: { $lte: now - IDEMPOTENCY_WINDOW_MS } });
  }

  close(): Promise<void> {
    return this.client.close();
  }

  /** The indexes trim and prune walk, made by the first of them: a claim needs only `_id`. */
  private indexes(): Promise<unknown> {
    this.indexed ??= Promise.all([
      this.keys.createIndex(BY_SCOPE, { name: 'by_scope' }),
      this.keys.createIndex({ started: 1 }, { name: 'by_start' }),
    ]).catch((error: unknown) => {
      this.indexed = null;
      throw error;
    });
    return this.indexed;
  }
}
