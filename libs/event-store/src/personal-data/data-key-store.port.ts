/**
 * Whose personal data a key protects (API.md "Personal data"): a person (the account with its
 * user, named by the user's id) or a customer, each a subject of its own.
 */
export type SubjectKind = 'user' | 'customer';

export interface DataSubject {
  readonly kind: SubjectKind;
  readonly id: string;
}

/** A subject's one name, as its stream is named (`user-<id>`, `customer-<id>`). */
export function subjectName(subject: DataSubject): string {
  return `${subject.kind}-${subject.id}`;
}

/** That a subject was erased: kept for good, after the key is gone. */
export interface Erasure {
  readonly subject: DataSubject;
  /** RFC 3339. */
  readonly erasedAt: string;
}

/**
 * What the key store holds for a subject: its key (the raw bytes, or as a KeyObject once in use),
 * or the record that it was erased.
 */
export type SubjectKey<K = Buffer> =
  { readonly state: 'active'; readonly key: K } | { readonly state: 'erased'; readonly erasure: Erasure };

/** No key is made for a subject that was erased: what is written about it stays unreadable. */
export class SubjectErasedError extends Error {
  readonly code = 'erased';
  constructor(readonly erasure: Erasure) {
    super(`${subjectName(erasure.subject)} was erased at ${erasure.erasedAt}`);
    this.name = 'SubjectErasedError';
  }
}

/**
 * The subjects' data keys, apart from the events (adapters: `DATA_DIR/data-keys.db` on the
 * embedded default, MongoDB's `data_keys` in production), each kept wrapped under a key derived
 * from DATA_KEY_SECRET (DataKeyWrapper). Destroying a subject's key is its erasure: the key is
 * gone for good, and a record of the erasure stays in its place, so that no key is ever made for
 * the subject again and a restore can re-apply the erasures it lists.
 */
export abstract class DataKeyStore {
  /**
   * Each subject's key, made (256 random bits) and kept durably at its first call, all in one
   * write: every call, on any instance, gets the same key. An erased subject's erasure instead.
   */
  abstract createMany(subjects: readonly DataSubject[]): Promise<Map<string, SubjectKey>>;

  /** What is held for each of `subjects`, by subjectName(); a subject with neither is absent. */
  abstract getMany(subjects: readonly DataSubject[]): Promise<Map<string, SubjectKey>>;

  /**
   * Erases the subject: its key is deleted (durably, before this resolves) and the erasure
   * recorded in its place. Idempotent: the erasure kept is the first one, which is answered.
   * A subject that had no key yet is recorded as erased all the same.
   */
  abstract destroy(erasure: Erasure): Promise<Erasure>;

  /** Up to `limit` erasures, ordered by subjectName(), of the subjects named after `after`. */
  abstract erasures(after: string | null, limit: number): Promise<Erasure[]>;

  /**
   * Up to `limit` erasures whose keys were destroyed at or after `since` (when destroy() ran, by
   * the clock of the process that ran it: not the erasure's own time, since a crashed erasure is
   * completed later), oldest first. What a process holding keys in memory polls to drop them.
   */
  abstract destroyedSince(since: Date, limit: number): Promise<Erasure[]>;

  abstract close(): Promise<void>;

  /** The subject's key (see createMany); a SubjectErasedError once the subject was erased. */
  async create(subject: DataSubject): Promise<Buffer> {
    const held = (await this.createMany([subject])).get(subjectName(subject))!;
    if (held.state === 'erased') throw new SubjectErasedError(held.erasure);
    return held.key;
  }

  /** What is held for one subject, or null: it never had a key and was not erased. */
  async get(subject: DataSubject): Promise<SubjectKey | null> {
    return (await this.getMany([subject])).get(subjectName(subject)) ?? null;
  }
}
