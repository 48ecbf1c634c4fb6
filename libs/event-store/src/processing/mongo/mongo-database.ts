/** The database named in a connection string's path (`mongodb://host/name?...`), if any. */
export function databaseFromUri(uri: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]+)/.exec(uri);
  return match ? decodeURIComponent(match[1]) : undefined;
}

/**
 * What every MongoDB client of ours waits at most: for a server to talk to (an unreachable one),
 * and for the answer to one command (a frozen one). Either is then an error within seconds, which
 * the API answers 503 and a processor retries; no request hangs.
 */
export const MONGO_DEADLINES = { serverSelectionTimeoutMS: 5_000, socketTimeoutMS: 10_000 } as const;
