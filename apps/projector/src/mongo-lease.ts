import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Collection, MongoServerError } from 'mongodb';

/** The `leases` document: who holds the lease, and a counter every renewal bumps. */
export interface LeaseRecord {
  _id: string;
  owner: string;
  /** Bumped by every acquisition and renewal: a holder that stops bumping it is gone. */
  version: number;
  /** For people reading the collection; no decision depends on another machine's clock. */
  renewedAt: Date;
  expiresAt: Date;
}

export interface MongoLeaseOptions {
  /** The lease's `_id` in the collection. */
  name: string;
  /** How long a holder may go without renewing before another process takes the lease over. */
  ttlMs: number;
  /** Names this process in the lease and in logs; unique per process by default. */
  owner?: string;
  /** A monotonic clock in milliseconds; tests pass their own. */
  now?: () => number;
}

export type LeaseAttempt =
  { acquired: true; tookOverFrom: string | null } | { acquired: false; holder: string };

const DUPLICATE_KEY = 11000;

export function processOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * A lease held in one MongoDB document, so that only one process does a job at a time.
 *
 * Expiry is judged without comparing clocks across machines: a contender takes the lease over
 * only after it has seen the document's `version` stay the same for a whole TTL on its own clock,
 * and then only with a compare-and-set on that version. A holder treats the lease as lost when a
 * renewal fails to match (someone took over) or when no renewal has succeeded for half a TTL, so
 * it stops well before any contender can have waited a full TTL.
 */
export class MongoLease {
  readonly owner: string;
  readonly ttlMs: number;
  private readonly name: string;
  private readonly now: () => number;
  /** The holder's version as last seen by this contender, and since when (own clock). */
  private observed: { version: number; since: number } | null = null;
  /** When the last successful acquisition or renewal was sent (own clock); null when not held. */
  private confirmedAt: number | null = null;

  constructor(
    private readonly leases: Collection<LeaseRecord>,
    options: MongoLeaseOptions,
  ) {
    if (!(options.ttlMs > 0)) throw new RangeError('ttlMs must be positive');
    this.name = options.name;
    this.ttlMs = options.ttlMs;
    this.owner = options.owner ?? processOwnerId();
    this.now = options.now ?? (() => performance.now());
  }

  /** How much longer this process may act as the holder without a renewal; 0 when it must not. */
  get heldForMs(): number {
    if (this.confirmedAt === null) return 0;
    return Math.max(0, this.confirmedAt + this.ttlMs / 2 - this.now());
  }

  /** One attempt: takes a free lease, or one whose holder has not renewed it for a whole TTL. */
  async tryAcquire(): Promise<LeaseAttempt> {
    const sentAt = this.now();
    const record = await this.leases.findOne({ _id: this.name });
    if (record === null) {
      try {
        await this.leases.insertOne({ _id: this.name, owner: this.owner, version: 1, ...this.stamps() });
      } catch (error) {
        // Another contender inserted it first.
        if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) {
          return { acquired: false, holder: (await this.holder()) ?? 'another process' };
        }
        throw error;
      }
      return this.acquired(sentAt, null);
    }
    if (record.owner === this.owner) return this.acquired(sentAt, null);

    if (this.observed === null || this.observed.version !== record.version) {
      this.observed = { version: record.version, since: sentAt };
      return { acquired: false, holder: record.owner };
    }
    if (sentAt - this.observed.since < this.ttlMs) return { acquired: false, holder: record.owner };

    const result = await this.leases.updateOne(
      { _id: this.name, version: record.version },
      { $set: { owner: this.owner, ...this.stamps() }, $inc: { version: 1 } },
    );
    if (result.matchedCount === 1) return this.acquired(sentAt, record.owner);
    return { acquired: false, holder: (await this.holder()) ?? 'another process' };
  }

  /** Extends the lease; false when another process holds it now (the caller must stop at once). */
  async renew(): Promise<boolean> {
    if (this.confirmedAt === null) return false;
    const sentAt = this.now();
    const result = await this.leases.updateOne(
      { _id: this.name, owner: this.owner },
      { $set: this.stamps(), $inc: { version: 1 } },
    );
    if (result.matchedCount !== 1) {
      this.confirmedAt = null;
      return false;
    }
    this.confirmedAt = sentAt;
    return true;
  }

  /** Gives the lease up, so that a waiting process takes it over without waiting out the TTL. */
  async release(): Promise<void> {
    this.confirmedAt = null;
    await this.leases.deleteOne({ _id: this.name, owner: this.owner });
  }

  /** The current holder, if any. */
  async holder(): Promise<string | null> {
    return (await this.leases.findOne({ _id: this.name }))?.owner ?? null;
  }

  private acquired(sentAt: number, tookOverFrom: string | null): LeaseAttempt {
    this.confirmedAt = sentAt;
    this.observed = null;
    return { acquired: true, tookOverFrom };
  }

  private stamps(): Pick<LeaseRecord, 'renewedAt' | 'expiresAt'> {
    const now = Date.now();
    return { renewedAt: new Date(now), expiresAt: new Date(now + this.ttlMs) };
  }
}
