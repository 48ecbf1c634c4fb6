import { randomUUID } from 'node:crypto';

/**
 * A UUID of version 7 (RFC 9562): the Unix time in milliseconds, then 74 random bits. Ids made
 * this way sort by time, so the embedded store's indexes on event ids and correlation ids take
 * each new one at their end rather than on a random page: an append writes about half the bytes
 * (bench/tools/append-index-cost.ts, bench/results/issue-22-write-before-after.md). They are
 * identifiers, not secrets; the time they show is the one `recordedAt` shows anyway.
 */
export function timeOrderedId(now: number = Date.now()): string {
  // A version 4 UUID's random bits, with its first 48 bits and its version replaced: randomUUID
  // draws from entropy Node fetches in bulk, where randomBytes(16) asked the system every call
  // (about 4% of a GET /customers' CPU in the profile of bench/README.md).
  const random = randomUUID();
  const time = now.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(15)}`;
}
