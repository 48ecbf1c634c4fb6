/** How long a key's first answer is kept and replayed. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Keys kept per account at most: a flood of keys from one account pushes its oldest out. */
export const KEYS_PER_ACCOUNT = 1000;

/** What is kept of a key: the request it was first used for and, once answered, the answer. */
export interface KeyRecord {
  /** SHA-256 of the method, path and body of the request the key was first used for. */
  fingerprint: string;
  /** Milliseconds: when the request that holds the key began. */
  started: number;
  /** The answer, sealed (see IdempotencyKeys); null while the request is still running. */
  response: string | null;
  /**
   * The attempt that holds the key: its request's id, which is the correlation id of every event
   * the request writes. A request that died unanswered is found in the event log by it.
   */
  owner: string;
  /**
   * The end of the event log (a formatted position) when the attempt took the key: every event it
   * wrote lies after it. Null: from the log's start (an empty log, or a record from before it was kept).
   */
  after: string | null;
}

export interface Claim {
  /** The account the key belongs to. */
  scope: string;
  /** SHA-256 of the key: every key takes the same room. */
  key: string;
  fingerprint: string;
  /** The request's id (its events' correlation id): only this attempt may complete or release the key. */
  owner: string;
  /** The end of the event log before the request writes anything (KeyRecord.after). */
  after: string | null;
  now: number;
}

/**
 * Where Idempotency-Key records live, shared by every API instance: the embedded store's SQLite
 * database under DATA_DIR by default, MongoDB in production. A key is (account, key); a record
 * lives IDEMPOTENCY_WINDOW_MS, and an account keeps KEYS_PER_ACCOUNT at most.
 */
export abstract class IdempotencyStore {
  /**
   * Takes the key for the attempt `claim.owner`, atomically across instances, unless a record of
   * the window holds it: then that record (answered, running, or left by a request that died). An
   * expired record is taken over. One write keyed by (account, key).
   */
  abstract claim(claim: Claim): Promise<KeyRecord | null>;

  /**
   * Takes the key from the unanswered record of the attempt `from` (its request died), unless
   * another claim took it first or it was answered meanwhile: then false.
   */
  abstract takeOver(claim: Claim, from: string): Promise<boolean>;

  /** Records the answer of the attempt that holds the key. */
  abstract complete(scope: string, key: string, owner: string, response: string): Promise<void>;

  /** Gives the key up (the request failed and wrote nothing): a retry runs again. */
  abstract release(scope: string, key: string, owner: string): Promise<void>;

  /** Deletes the account's records beyond its newest `keep`. */
  abstract trim(scope: string, keep: number): Promise<void>;

  /** Deletes the records expired by `now`. */
  abstract prune(now: number): Promise<void>;

  abstract close(): Promise<void>;
}

/** Whether a record's window is over at `now`: its key is free again. */
export function isExpired(record: Pick<KeyRecord, 'started'>, now: number): boolean {
  return record.started <= now - IDEMPOTENCY_WINDOW_MS;
}
