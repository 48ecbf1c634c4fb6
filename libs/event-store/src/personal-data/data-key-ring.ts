import { createSecretKey, type KeyObject } from 'node:crypto';
import { DataKeyStore, DataSubject, Erasure, SubjectKey, subjectName } from './data-key-store.port';

/** A key as the ring hands it out: a KeyObject, which a cipher uses without importing it again. */
export type RingKey = SubjectKey<KeyObject>;

export interface DataKeyRingOptions {
  /**
   * How often the store is asked which keys were destroyed since it was last asked (at the first
   * use after this long): what bounds how long another instance's erasure goes unseen here
   * (API.md: a second). Keys themselves stay in memory: a key never changes, it only goes.
   */
  erasurePollMs?: number;
  /** Keys kept in memory at most (oldest first out): a replay of many subjects grows nothing. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * How far before the previous poll each poll looks: a destroy is stamped by the clock of the
 * process that ran it, which may run behind this one's (NTP keeps instances well within this).
 */
const POLL_OVERLAP_MS = 60_000;
/** Erasures one poll reads at most; more (a mass erasure) and every key in memory is dropped. */
const POLL_LIMIT = 10_000;

interface Pending {
  subjects: Map<string, DataSubject>;
  done: Promise<Map<string, RingKey>>;
}

/**
 * The subjects' keys as the store's read and write paths use them: from memory, else from the key
 * store, many at a time. Another instance's erasures reach memory by a poll of the store's
 * erasures, at most once per `erasurePollMs` and only when a key is asked for: one query a second
 * however many keys are in use, instead of a query per key. Keys to write under that are asked
 * for in the same turn of the event loop (concurrent appends) are made in one call to the store,
 * so one durable write serves them all.
 */
export class DataKeyRing {
  private readonly cache = new Map<string, RingKey>();
  private readonly erasurePollMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private pending: Pending | null = null;
  /** When the last poll began: erasures destroyed from then on (less the overlap) are polled next. */
  private polledAt: number;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly store: DataKeyStore,
    options: DataKeyRingOptions = {},
  ) {
    this.erasurePollMs = options.erasurePollMs ?? 1_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
    // Memory starts empty: no erasure before now can be held here.
    this.polledAt = this.now();
  }

  /** What is held for each subject, by subjectName(); a subject with no key and no erasure is absent. */
  async forReading(subjects: readonly DataSubject[]): Promise<Map<string, RingKey>> {
    const polled = this.erasuresPolled();
    if (polled !== null) await polled;
    const { found, missing } = this.cached(subjects);
    if (missing.length === 0) return found;
    for (const [name, key] of await this.store.getMany(missing)) found.set(name, this.remember(name, key));
    return found;
  }

  /** Each subject's key, made when it has none yet; an erased subject's erasure instead. */
  async forWriting(subjects: readonly DataSubject[]): Promise<Map<string, RingKey>> {
    const polled = this.erasuresPolled();
    if (polled !== null) await polled;
    const { found, missing } = this.cached(subjects);
    if (missing.length === 0) return found;
    const made = await this.made(missing);
    for (const subject of missing) {
      const name = subjectName(subject);
      found.set(name, made.get(name)!);
    }
    return found;
  }

  /**
   * Destroys the subject's key in the store (durably: the erasure), and at once in this process's
   * memory; other processes stop using theirs within `erasurePollMs`. Idempotent: the first erasure
   * recorded is answered.
   */
  async destroy(erasure: Erasure): Promise<Erasure> {
    const kept = await this.store.destroy(erasure);
    this.remember(subjectName(kept.subject), { state: 'erased', erasure: kept });
    return kept;
  }

  close(): Promise<void> {
    this.cache.clear();
    return this.store.close();
  }

  private cached(subjects: readonly DataSubject[]): {
    found: Map<string, RingKey>;
    missing: DataSubject[];
  } {
    const found = new Map<string, RingKey>();
    const missing = new Map<string, DataSubject>();
    for (const subject of subjects) {
      const name = subjectName(subject);
      if (found.has(name) || missing.has(name)) continue;
      const cached = this.cache.get(name);
      if (cached !== undefined) found.set(name, cached);
      else missing.set(name, subject);
    }
    return { found, missing: [...missing.values()] };
  }

  /** Joins the batch of this turn, or starts one that the store makes at the turn's end. */
  private made(subjects: readonly DataSubject[]): Promise<Map<string, RingKey>> {
    if (this.pending === null) {
      const batch = new Map<string, DataSubject>();
      const done = new Promise<void>((resolve) => queueMicrotask(resolve)).then(async () => {
        this.pending = null;
        const wanted = [...batch.values()];
        // Most subjects written to have a key already (made by another process, or evicted from
        // memory): read without the store's write lock, and make only the rest (one durable write).
        const held = await this.store.getMany(wanted);
        const absent = wanted.filter((subject) => !held.has(subjectName(subject)));
        const keys = new Map<string, RingKey>();
        for (const [name, key] of held) keys.set(name, this.remember(name, key));
        if (absent.length === 0) return keys;
        for (const [name, key] of await this.store.createMany(absent))
          keys.set(name, this.remember(name, key));
        return keys;
      });
      this.pending = { subjects: batch, done };
    }
    for (const subject of subjects) this.pending.subjects.set(subjectName(subject), subject);
    return this.pending.done;
  }

  private remember(name: string, held: SubjectKey): RingKey {
    // Imported once here: a raw key would be checked and imported again by every cipher (~30 µs).
    const key: RingKey = held.state === 'erased' ? held : { state: 'active', key: createSecretKey(held.key) };
    this.cache.delete(name);
    if (this.cache.size >= this.maxEntries) this.evictOldest();
    this.cache.set(name, key);
    return key;
  }

  /**
   * The oldest quarter out, in one pass: a Map keeps deleted entries' slots until it is rehashed,
   * and keys().next() walks past them, so taking out one key per insert (a replay of many
   * subjects) cost ~12 µs per key at 10,000 entries.
   */
  private evictOldest(): void {
    let count = Math.max(1, Math.floor(this.maxEntries / 4));
    for (const name of this.cache.keys()) {
      this.cache.delete(name);
      if (--count === 0) break;
    }
  }

  /** A poll of the store's erasures when the last is older than `erasurePollMs` (one at a time), else null. */
  private erasuresPolled(): Promise<void> | null {
    if (this.now() - this.polledAt < this.erasurePollMs) return null;
    this.polling ??= this.poll().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private async poll(): Promise<void> {
    const started = this.now();
    const erasures = await this.store.destroyedSince(new Date(this.polledAt - POLL_OVERLAP_MS), POLL_LIMIT);
    if (erasures.length >= POLL_LIMIT) this.cache.clear();
    for (const erasure of erasures) {
      const name = subjectName(erasure.subject);
      // Only keys held here change; any other is read from the store, erased, when asked for.
      if (this.cache.has(name)) this.cache.set(name, { state: 'erased', erasure });
    }
    this.polledAt = started;
  }
}
