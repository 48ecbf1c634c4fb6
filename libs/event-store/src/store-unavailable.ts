/** A call to a store got no answer in time (a frozen server): the adapter gave up waiting. */
export class StoreTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} got no answer within ${ms} ms`);
    this.name = 'StoreTimeoutError';
  }
}

/** `promise`, or a StoreTimeoutError after `ms`: the answer is not awaited any longer. */
export async function withinDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(what, ms)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
    // A late outcome no longer matters.
    promise.catch(() => undefined);
  }
}

/** A connection that broke or never opened: the MongoDB driver lets some of these through unwrapped. */
const NETWORK_FAILURES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * gRPC statuses of a server that cannot be reached: UNAVAILABLE (14), DEADLINE_EXCEEDED (4). The
 * EventStoreDB client lets them through unwrapped when no connection ever opened (its probe of the
 * server's features fails first): a plain error with a numeric code, details and metadata.
 */
const GRPC_UNREACHABLE = new Set([4, 14]);

export function isGrpcUnreachable(error: object): boolean {
  const { code, details, metadata } = error as { code?: unknown; details?: unknown; metadata?: unknown };
  return (
    typeof code === 'number' &&
    GRPC_UNREACHABLE.has(code) &&
    typeof details === 'string' &&
    typeof metadata === 'object' &&
    metadata !== null
  );
}

/** SQLite's codes for a store that cannot be used now: a full disk, I/O, a lock held too long, a lost file. */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|READONLY|CANTOPEN|CORRUPT|NOTADB)/;

/**
 * The error classes of client libraries that mean their server cannot be reached now. Each adapter
 * adds its library's when it connects, so that this module, and a process that never uses a
 * library, does not load it (the EventStoreDB and MongoDB clients are a sixth of the API's start-up).
 */
const unavailableErrorClasses = new Set<abstract new (...args: never[]) => Error>();

export function recognizeUnavailableErrors(
  classes: ReadonlyArray<abstract new (...args: never[]) => Error>,
): void {
  for (const errorClass of classes) unavailableErrorClasses.add(errorClass);
}

/**
 * Whether `error` says a store (the event store, the read store, the checkpoints) is down, frozen
 * or out of space, rather than that the request was wrong: the answer is then a 503 that asks the
 * client to come back, not a 500.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (error instanceof StoreTimeoutError) return true;
  if (typeof error !== 'object' || error === null) return false;
  for (const errorClass of unavailableErrorClasses) if (error instanceof errorClass) return true;
  if (isGrpcUnreachable(error)) return true;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && (SQLITE_UNAVAILABLE.test(code) || NETWORK_FAILURES.has(code));
}

/** Whether `error` says the store's file is damaged: retrying cannot help, the process stops and says so. */
export function isStoreDamaged(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}
