import { type Collection, type MongoClient, MongoServerError } from 'mongodb';
import { AttemptCounters } from '@chronicle/application';
import { databaseFromUri } from '@chronicle/event-store';
import { mongoClient } from '@chronicle/event-store/mongo';

interface CounterDocument {
  _id: string;
  count: number;
  /** Milliseconds: the end of the counter's window. */
  expiresAt: number;
}

const COLLECTION = 'attempt_counters';
const PRUNE_INTERVAL_MS = 60_000;
const DUPLICATE_KEY = 11000;

/**
 * Attempt counters of the production shape, in MongoDB: one document per key and window, counted
 * with `$inc`, so every API instance shares them. Documents of past windows are deleted every
 * minute (a TTL index would do it too, but is not something every deployment's user may create).
 */
export class MongoAttemptCounters extends AttemptCounters {
  private readonly client: MongoClient;
  private readonly counters: Collection<CounterDocument>;
  private pruning: NodeJS.Timeout | null = null;

  constructor(
    uri: string,
    private readonly now: () => number = () => Date.now(),
  ) {
    super();
    // The driver connects on first use: processes that never count never connect.
    // An unreachable server fails the request within seconds rather than holding it for 30 s.
    this.client = mongoClient(uri, { writeConcern: { w: 'majority' }, serverSelectionTimeoutMS: 5_000 });
    this.counters = this.client
      .db(databaseFromUri(uri) ?? 'chronicle')
      .collection<CounterDocument>(COLLECTION);
  }

  async add(key: string, window: number, expiresAt: number): Promise<number> {
    if (this.pruning === null) {
      // Started by the first count: processes that never count (the projector, the CLI) never prune.
      // A failed prune is retried at the next interval; counting does not depend on it.
      this.pruning = setInterval(() => void this.prune(this.now()).catch(() => undefined), PRUNE_INTERVAL_MS);
      this.pruning.unref();
    }
    const _id = `${window}:${key}`;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.counters.updateOne(
          { _id },
          { $inc: { count: 1 }, $setOnInsert: { expiresAt } },
          { upsert: true },
        );
        break;
      } catch (error) {
        // Two first attempts at once: one inserted, the other increments what it inserted.
        if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY) || attempt > 0) throw error;
      }
    }
    // Read after the increment: concurrent attempts may be counted too, never fewer than this one.
    const counter = await this.counters.findOne({ _id });
    return counter?.count ?? 1;
  }

  /** Deletes the counters of windows over by `now`. */
  async prune(now: number): Promise<void> {
    await this.counters.deleteMany({ expiresAt: { $lte: now } });
  }

  async remove(key: string, window: number): Promise<void> {
    await this.counters.updateOne({ _id: `${window}:${key}`, count: { $gt: 0 } }, { $inc: { count: -1 } });
  }

  async mark(key: string, expiresAt: number): Promise<void> {
    await this.counters.updateOne(
      { _id: `mark:${key}` },
      { $set: { expiresAt }, $setOnInsert: { count: 1 } },
      { upsert: true },
    );
  }

  async marked(key: string, now: number): Promise<boolean> {
    return (await this.counters.findOne({ _id: `mark:${key}`, expiresAt: { $gt: now } })) !== null;
  }

  async close(): Promise<void> {
    if (this.pruning !== null) clearInterval(this.pruning);
    await this.client.close();
  }
}
