import { createSecretKey, type KeyObject } from 'node:crypto';
import { DataKeyStore, DataSubject, Erasure, SubjectKey, subjectName } from './data-key-store.port';

/** A key as the ring hands it out: a KeyObject, which a cipher uses without importing it again. */
export type RingKey = SubjectKey<KeyObject>;

export interface DataKeyRingOptions {
  /**
   * How long an active key is used from memory before the store is asked again: what bounds how
   * long another instance's erasure goes unseen here (API.md: a second).
   */
  activeTtlMs?: number;
  /** Keys kept in memory at most (oldest first out): a replay of many subjects grows nothing. */
  maxEntries?: number;
  now?: () => number;
}

interface Cached {
  key: RingKey;
  /** Active keys only: when the store must be asked again. Erasures are final. */
  until: number;
}

interface Pending {
  subjects: Map<string, DataSubject>;
  done: Promise<Map<string, RingKey>>;
}

/**
 * The subjects' keys as the store's read and write paths use them: from memory while fresh, else
 * from the key store, many at a time. Keys to write under that are asked for in the same turn of
 * the event loop (concurrent appends) are made in one call to the store, so one durable write
 * serves them all.
 */
export class DataKeyRing {
  private readonly cache = new Map<string, Cached>();
  private readonly activeTtlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private pending: Pending | null = null;

  constructor(
    private readonly store: DataKeyStore,
    options: DataKeyRingOptions = {},
  ) {
    this.activeTtlMs = options.activeTtlMs ?? 1_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** What is held for each subject, by subjectName(); a subject with no key and no erasure is absent. */
  async forReading(subjects: readonly DataSubject[]): Promise<Map<string, RingKey>> {
    const { found, missing } = this.cached(subjects);
    if (missing.length === 0) return found;
    for (const [name, key] of await this.store.getMany(missing)) found.set(name, this.remember(name, key));
    return found;
  }

  /** Each subject's key, made when it has none yet; an erased subject's erasure instead. */
  async forWriting(subjects: readonly DataSubject[]): Promise<Map<string, RingKey>> {
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
   * memory; other processes stop using theirs within `activeTtlMs`. Idempotent: the first erasure
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
    const now = this.now();
    for (const subject of subjects) {
      const name = subjectName(subject);
      if (found.has(name) || missing.has(name)) continue;
      const cached = this.cache.get(name);
      if (cached !== undefined && cached.until > now) found.set(name, cached.key);
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
        const keys = new Map<string, RingKey>();
        for (const [name, key] of await this.store.createMany([...batch.values()])) {
          keys.set(name, this.remember(name, key));
        }
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
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(name, { key, until: key.state === 'erased' ? Infinity : this.now() + this.activeTtlMs });
    return key;
  }
}
