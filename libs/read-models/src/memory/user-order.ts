import { compareUtf8 } from '../read-store.port';

interface Entry {
  createdon: string;
  id: string;
}

/** Entries per chunk at most; a fuller chunk is split in two. */
const CHUNK_ENTRIES = 1024;

const compare = (a: Entry, b: Entry): number =>
  compareUtf8(a.createdon, b.createdon) || compareUtf8(a.id, b.id);

/**
 * User ids sorted by createdon, then id (both by their UTF-8 bytes, as MongoDB sorts strings; a
 * user without createdon first, as MongoDB puts a missing field first), in sorted chunks of at
 * most 1024. An insert or removal moves at most one chunk's entries, wherever it lands (users
 * sharing a createdon land by id, at random), and a page walks the chunk sizes to its offset:
 * neither grows with the number of users beyond a few thousand chunk sizes at a million.
 */
export class UserOrder {
  private chunks: Entry[][] = [];
  private entries = 0;

  get size(): number {
    return this.entries;
  }

  insert(id: string, createdon: string | undefined): void {
    const entry = { createdon: createdon ?? '', id };
    if (this.chunks.length === 0) {
      this.chunks.push([entry]);
    } else {
      const at = this.chunkFor(entry);
      const chunk = this.chunks[at];
      chunk.splice(lowerBound(chunk, entry), 0, entry);
      // The upper half becomes a chunk of its own, right after.
      if (chunk.length > CHUNK_ENTRIES) this.chunks.splice(at + 1, 0, chunk.splice(chunk.length >>> 1));
    }
    this.entries++;
  }

  remove(id: string, createdon: string | undefined): void {
    const entry = { createdon: createdon ?? '', id };
    const at = this.chunkFor(entry);
    const chunk = this.chunks[at];
    const index = chunk === undefined ? -1 : lowerBound(chunk, entry);
    if (index < 0 || chunk[index]?.id !== id) {
      throw new Error(`User ${id} is not in the order where its createdon puts it`);
    }
    chunk.splice(index, 1);
    if (chunk.length === 0) this.chunks.splice(at, 1);
    this.entries--;
  }

  /** Every id, in order. */
  *ids(): Generator<string> {
    for (const chunk of this.chunks) for (const entry of chunk) yield entry.id;
  }

  /** At most `limit` ids from `offset`. */
  slice(offset: number, limit: number): string[] {
    const ids: string[] = [];
    let skip = offset;
    for (const chunk of this.chunks) {
      if (ids.length >= limit) break;
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      for (let at = skip; at < chunk.length && ids.length < limit; at++) ids.push(chunk[at].id);
      skip = 0;
    }
    return ids;
  }

  /** The chunk an entry belongs in: the first whose last entry does not sort before it, else the last. */
  private chunkFor(entry: Entry): number {
    let low = 0;
    let high = this.chunks.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(this.chunks[middle].at(-1)!, entry) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** The first index whose entry does not sort before `entry`. */
function lowerBound(chunk: Entry[], entry: Entry): number {
  let low = 0;
  let high = chunk.length;
  // Users register in about createdon order, so an entry nearly always goes last: check there first.
  if (high > 0 && compare(chunk[high - 1], entry) < 0) return high;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(chunk[middle], entry) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
