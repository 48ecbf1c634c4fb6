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
}

export interface Claim {
  /** The account the key belongs to. */
  scope: string;
  /** SHA-256 of the key: every key takes the same room. */
  key: string;
  fingerprint: string;
  /** A random id of this attempt: only it may complete or release the key. */
  owner: string;
  now: number;
  /** A request still running after this many milliseconds has died: its key may be taken over. */
  leaseMs: number;
}

/**
 * Where Idempotency-Key records live, shared by every API instance: the embedded store's SQLite
 * database under DATA_DIR by default, MongoDB in production. A key is (account, key); a record
 * lives IDEMPOTENCY_WINDOW_MS, and an account keeps KEYS_PER_ACCOUNT at most.
 */
export abstract class IdempotencyStore {
  /**
   * Takes the key for the attempt `claim.owner`, atomically across instances, unless a live record
   * holds it: then that record (answered, or still running). An expired record, or one whose
   * request has outlived its lease, is taken over. One write keyed by (account, key).
   */
  abstract claim(claim: Claim): Promise<KeyRecord | null>;

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

/**
 * Records that no longer hold their key at `claim.now`: started at or before `expired` (the window
 * is over), or still unanswered and started at or before `leaseEnded` (its request has died).
 */
export function takeoverBounds(claim: Pick<Claim, 'now' | 'leaseMs'>): {
  expired: number;
  leaseEnded: number;
} {
  return { expired: claim.now - IDEMPOTENCY_WINDOW_MS, leaseEnded: claim.now - claim.leaseMs };
}

/** Whether a record still holds its key: answered within the window, or running within its lease. */
export function isLive(record: KeyRecord, claim: Pick<Claim, 'now' | 'leaseMs'>): boolean {
  const { expired, leaseEnded } = takeoverBounds(claim);
  if (record.started <= expired) return false;
  return record.response !== null || record.started > leaseEnded;
}
