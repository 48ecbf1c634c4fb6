import { createHash, Hash } from 'node:crypto';
import { endianness } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Position } from '@chronicle/event-store';
import { UserDocument } from '../../read-store.port';
import { CustomerColumnsImage } from '../customer-columns';
import { growableColumn, growableHeap } from '../growable-buffers';
import { MemoryReadStoreImage, UserImage } from '../memory-read-store';

/**
 * The read models' snapshot file:
 *
 *   "CHRNSNAP" | header length (u32 LE) | header (JSON) | the customer columns, each `rows`
 *   entries in this machine's byte order (ids f64, createdon f64, commits u64, text start,
 *   name and e-mail lengths u32) | the text heap | the users (JSON) | SHA-256 of all before it
 *
 * The header says what the sections hold and which store and position they were taken of; the
 * size it implies and the digest tell a torn or damaged file from a whole one.
 */
const MAGIC = Buffer.from('CHRNSNAP', 'latin1');
const FORMAT = 1;
const PREFIX_BYTES = MAGIC.length + 4;
const DIGEST_BYTES = 32;
const MAX_HEADER_BYTES = 64 * 1024 * 1024;
/** Bytes hashed between two turns of the event loop (a few ms). */
const HASH_CHUNK_BYTES = 4 * 1024 * 1024;
/** Users serialised between two turns of the event loop. */
const USERS_PER_CHUNK = 5_000;
/** Bytes of the columns per customer. */
const ROW_BYTES = 8 + 8 + 8 + 4 + 4 + 4;

/** What ties a snapshot to its history: the store, and the event its checkpoint names. */
export interface SnapshotOrigin {
  storeId: string;
  /** The id of the event at the read models' checkpoint; null when it names none. */
  anchorEventId: string | null;
}

interface Header extends SnapshotOrigin {
  format: number;
  endianness: string;
  writtenAt: string;
  checkpoints: [name: string, commit: string, prepare: string][];
  customers: number;
  heapBytes: number;
  prepares: [number, string][];
  irregularCreated: [number, string][];
  users: number;
  usersBytes: number;
}

/** A file that is not a whole snapshot this build can read; `message` says why. */
export class SnapshotRejectedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'SnapshotRejectedError';
  }
}

/** Where a snapshot is read from: its size, and reads at an offset that fill `into` or throw. */
export interface SnapshotSource {
  readonly size: number;
  read(into: Uint8Array, offset: number): Promise<void>;
}

export interface DecodedSnapshot {
  origin: SnapshotOrigin;
  writtenAt: string;
  image: MemoryReadStoreImage;
}

/**
 * Writes `image` through `write` (each call's bytes are to be written whole, in order, before
 * it resolves), hashing as it goes and yielding to the event loop between chunks. Returns the
 * bytes written. The image's arrays are written as they are, not copied: they must not change
 * until this resolves.
 */
export async function encodeSnapshot(
  image: MemoryReadStoreImage,
  origin: SnapshotOrigin,
  write: (bytes: Uint8Array) => Promise<void>,
): Promise<number> {
  const hash = createHash('sha256');
  let bytes = 0;
  const put = async (chunk: Uint8Array) => {
    await hashIn(hash, chunk);
    await write(chunk);
    bytes += chunk.byteLength;
  };
  const customers = image.customers;
  const users: Buffer[] = [];
  let batch: string[] = [];
  const flush = () => {
    users.push(Buffer.from(`${users.length === 0 ? '[' : ','}${batch.join(',')}`, 'utf8'));
    batch = [];
  };
  let userCount = 0;
  for (const [id, doc, at] of image.users) {
    batch.push(JSON.stringify([id, doc, at.commit.toString(), at.prepare.toString()]));
    userCount++;
    if (batch.length === USERS_PER_CHUNK) {
      flush();
      await nextTurn();
    }
  }
  if (batch.length > 0 || users.length === 0) flush();
  users.push(Buffer.from(']', 'utf8'));
  const header: Header = {
    format: FORMAT,
    endianness: endianness(),
    writtenAt: new Date().toISOString(),
    storeId: origin.storeId,
    anchorEventId: origin.anchorEventId,
    checkpoints: image.checkpoints.map(([name, at]) => [name, at.commit.toString(), at.prepare.toString()]),
    customers: customers.rows,
    heapBytes: customers.heap.byteLength,
    prepares: customers.prepares,
    irregularCreated: customers.irregularCreated,
    users: userCount,
    usersBytes: users.reduce((sum, chunk) => sum + chunk.byteLength, 0),
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(PREFIX_BYTES);
  MAGIC.copy(prefix);
  prefix.writeUInt32LE(headerBytes.byteLength, MAGIC.length);
  await put(prefix);
  await put(headerBytes);
  for (const column of columnsOf(customers)) await put(asBytes(column));
  await put(customers.heap);
  for (const chunk of users) await put(chunk);
  const digest = hash.digest();
  await write(digest);
  return bytes + digest.byteLength;
}

/**
 * Reads a snapshot back, checking as it goes that it is whole: its kind and format, the size its
 * header implies, and its digest. Throws SnapshotRejectedError saying what is wrong.
 */
export async function decodeSnapshot(source: SnapshotSource): Promise<DecodedSnapshot> {
  if (source.size < PREFIX_BYTES + DIGEST_BYTES) {
    throw new SnapshotRejectedError(`it is ${source.size} bytes, too short to be a snapshot (torn?)`);
  }
  const hash = createHash('sha256');
  let offset = 0;
  const take = async <T extends ArrayBufferView>(into: T): Promise<T> => {
    await source.read(asBytes(into), offset);
    offset += into.byteLength;
    await hashIn(hash, into);
    return into;
  };
  const prefix = await take(Buffer.alloc(PREFIX_BYTES));
  if (!prefix.subarray(0, MAGIC.length).equals(MAGIC))
    throw new SnapshotRejectedError('it is not a snapshot');
  const headerLength = prefix.readUInt32LE(MAGIC.length);
  if (headerLength > MAX_HEADER_BYTES || PREFIX_BYTES + headerLength + DIGEST_BYTES > source.size) {
    throw new SnapshotRejectedError(`its header length (${headerLength}) does not fit the file (torn?)`);
  }
  const header = parseHeader(await take(Buffer.alloc(headerLength)));
  const expected =
    PREFIX_BYTES +
    headerLength +
    header.customers * ROW_BYTES +
    header.heapBytes +
    header.usersBytes +
    DIGEST_BYTES;
  if (expected !== source.size) {
    throw new SnapshotRejectedError(`it is ${source.size} bytes where its header says ${expected} (torn?)`);
  }
  const rows = header.customers;
  const customers: CustomerColumnsImage = {
    rows,
    // Read into growable columns, that the store goes on growing in place.
    ids: await take(growableColumn(Float64Array, rows)),
    created: await take(growableColumn(Float64Array, rows)),
    commits: await take(growableColumn(BigUint64Array, rows)),
    textStart: await take(growableColumn(Uint32Array, rows)),
    nameBytes: await take(growableColumn(Uint32Array, rows)),
    emailBytes: await take(growableColumn(Uint32Array, rows)),
    heap: await take(growableHeap(header.heapBytes)),
    prepares: header.prepares,
    irregularCreated: header.irregularCreated,
  };
  const usersBytes = await take(Buffer.allocUnsafeSlow(header.usersBytes));
  const digest = Buffer.alloc(DIGEST_BYTES);
  await source.read(digest, offset);
  if (!digest.equals(hash.digest()))
    throw new SnapshotRejectedError('its digest does not match its contents');
  const users = parseUsers(usersBytes, header.users);
  return {
    origin: { storeId: header.storeId, anchorEventId: header.anchorEventId },
    writtenAt: header.writtenAt,
    image: {
      customers,
      userCount: users.length,
      users,
      checkpoints: header.checkpoints.map(([name, commit, prepare]) => [name, toPosition(commit, prepare)]),
    },
  };
}

/** The byte typed arrays of the column views, in file order. */
function columnsOf(customers: CustomerColumnsImage): ArrayBufferView[] {
  return [
    customers.ids,
    customers.created,
    customers.commits,
    customers.textStart,
    customers.nameBytes,
    customers.emailBytes,
  ];
}

function asBytes(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

async function hashIn(hash: Hash, data: ArrayBufferView): Promise<void> {
  const bytes = asBytes(data);
  for (let at = 0; at < bytes.byteLength; at += HASH_CHUNK_BYTES) {
    if (at > 0) await nextTurn();
    hash.update(bytes.subarray(at, at + HASH_CHUNK_BYTES));
  }
}

function parseHeader(bytes: Buffer): Header {
  let header: Header;
  try {
    header = JSON.parse(bytes.toString('utf8')) as Header;
  } catch {
    throw new SnapshotRejectedError('its header is not JSON');
  }
  if (typeof header !== 'object' || header === null || header.format !== FORMAT) {
    throw new SnapshotRejectedError(`its format (${String(header?.format)}) is not ${FORMAT}`);
  }
  if (header.endianness !== endianness()) {
    throw new SnapshotRejectedError(`it was written with ${String(header.endianness)} byte order`);
  }
  const counts = [header.customers, header.heapBytes, header.users, header.usersBytes];
  if (!counts.every((count) => Number.isSafeInteger(count) && count >= 0)) {
    throw new SnapshotRejectedError('its header holds a bad section size');
  }
  if (
    typeof header.storeId !== 'string' ||
    !(header.anchorEventId === null || typeof header.anchorEventId === 'string') ||
    !Array.isArray(header.checkpoints) ||
    !Array.isArray(header.prepares) ||
    !Array.isArray(header.irregularCreated)
  ) {
    throw new SnapshotRejectedError('its header is incomplete');
  }
  return header;
}

function parseUsers(bytes: Buffer, count: number): UserImage[] {
  const entries = JSON.parse(bytes.toString('utf8')) as [string, Partial<UserDocument>, string, string][];
  if (!Array.isArray(entries) || entries.length !== count) {
    throw new SnapshotRejectedError('its users section does not hold the users its header counts');
  }
  return entries.map(([id, doc, commit, prepare]) => [id, doc, toPosition(commit, prepare)]);
}

function toPosition(commit: string, prepare: string): Position {
  if (!/^\d{1,20}$/.test(commit) || !/^\d{1,20}$/.test(prepare)) {
    throw new SnapshotRejectedError(`it holds a malformed position ${commit}:${prepare}`);
  }
  return { commit: BigInt(commit), prepare: BigInt(prepare) };
}
