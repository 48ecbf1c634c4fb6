import { randomBytes } from 'node:crypto';

/**
 * A UUID of version 7 (RFC 9562): the Unix time in milliseconds, then 74 random bits. Ids made
 * this way sort by time, so the embedded store's indexes on event ids and correlation ids take
 * each new one at their end rather than on a random page: an append writes about half the bytes
 * (bench/tools/append-index-cost.ts, bench/results/issue-22-write-before-after.md). They are
 * identifiers, not secrets; the time they show is the one `recordedAt` shows anyway.
 */
export function timeOrderedId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
