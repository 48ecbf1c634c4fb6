import { BSON, Document } from 'bson';

/** MongoDB wire protocol op codes the double reads or writes. */
export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_MSG = 2013;

const HEADER_SIZE = 16;
const CHECKSUM_PRESENT = 1 << 0;
const MORE_TO_COME = 1 << 1;

/**
 * Typed wrappers (Int32, Double, Long) instead of JS numbers, so stored values keep their exact
 * BSON type and are sent back unchanged.
 */
const DESERIALIZE = { promoteValues: false } as const;

export interface Request {
  requestId: number;
  opCode: number;
  /** The command document; OP_MSG document sequences are merged in as array fields. */
  command: Document;
  /** OP_QUERY only: the namespace the command was sent to (`admin.$cmd`). */
  fullCollectionName?: string;
  /** OP_MSG moreToCome: the client expects no reply (unacknowledged writes). */
  moreToCome: boolean;
}

/** Splits a byte stream into whole messages; keeps any partial message for the next chunk. */
export class MessageReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const messages: Buffer[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readInt32LE(0);
      if (length < HEADER_SIZE) throw new Error(`invalid message length ${length}`);
      if (this.pending.length < length) break;
      messages.push(this.pending.subarray(0, length));
      this.pending = this.pending.subarray(length);
    }
    return messages;
  }
}

export function decodeRequest(message: Buffer): Request {
  const requestId = message.readInt32LE(4);
  const opCode = message.readInt32LE(12);
  if (opCode === OP_MSG) return { requestId, opCode, ...decodeOpMsg(message) };
  if (opCode === OP_QUERY) return { requestId, opCode, moreToCome: false, ...decodeOpQuery(message) };
  throw new Error(`unsupported op code ${opCode}`);
}

function decodeOpMsg(message: Buffer): { command: Document; moreToCome: boolean } {
  const flags = message.readUInt32LE(HEADER_SIZE);
  const end = flags & CHECKSUM_PRESENT ? message.length - 4 : message.length;
  let offset = HEADER_SIZE + 4;
  let command: Document | undefined;
  const sequences: Array<[string, Document[]]> = [];
  while (offset < end) {
    const kind = message[offset++];
    if (kind === 0) {
      const size = message.readInt32LE(offset);
      command = BSON.deserialize(message.subarray(offset, offset + size), DESERIALIZE);
      offset += size;
    } else if (kind === 1) {
      const size = message.readInt32LE(offset);
      const sectionEnd = offset + size;
      const nameEnd = message.indexOf(0, offset + 4);
      const identifier = message.toString('utf8', offset + 4, nameEnd);
      const documents: Document[] = [];
      for (let at = nameEnd + 1; at < sectionEnd;) {
        const docSize = message.readInt32LE(at);
        documents.push(BSON.deserialize(message.subarray(at, at + docSize), DESERIALIZE));
        at += docSize;
      }
      sequences.push([identifier, documents]);
      offset = sectionEnd;
    } else {
      throw new Error(`unsupported OP_MSG section kind ${kind}`);
    }
  }
  if (!command) throw new Error('OP_MSG without a body section');
  for (const [identifier, documents] of sequences) command[identifier] = documents;
  return { command, moreToCome: (flags & MORE_TO_COME) !== 0 };
}

/** Legacy OP_QUERY: the driver sends its first handshake this way, before it knows the wire version. */
function decodeOpQuery(message: Buffer): { command: Document; fullCollectionName: string } {
  const nameStart = HEADER_SIZE + 4;
  const nameEnd = message.indexOf(0, nameStart);
  const fullCollectionName = message.toString('utf8', nameStart, nameEnd);
  const queryStart = nameEnd + 1 + 8; // numberToSkip, numberToReturn
  const size = message.readInt32LE(queryStart);
  const query = BSON.deserialize(message.subarray(queryStart, queryStart + size), DESERIALIZE);
  // A wrapped query ({$query: {...}, $readPreference}) carries the command one level down.
  const command = '$query' in query ? (query.$query as Document) : query;
  return { command, fullCollectionName };
}

let nextResponseId = 1;

function header(length: number, responseTo: number, opCode: number): Buffer {
  const buffer = Buffer.alloc(HEADER_SIZE);
  buffer.writeInt32LE(length, 0);
  buffer.writeInt32LE(nextResponseId++ & 0x7fffffff, 4);
  buffer.writeInt32LE(responseTo, 8);
  buffer.writeInt32LE(opCode, 12);
  return buffer;
}

export function encodeOpMsg(responseTo: number, body: Document): Buffer {
  const payload = BSON.serialize(body);
  const length = HEADER_SIZE + 4 + 1 + payload.length;
  const flagsAndKind = Buffer.alloc(5); // flags 0, section kind 0
  return Buffer.concat([header(length, responseTo, OP_MSG), flagsAndKind, payload], length);
}

export function encodeOpReply(responseTo: number, body: Document): Buffer {
  const payload = BSON.serialize(body);
  const fields = Buffer.alloc(20); // responseFlags, cursorID (int64), startingFrom, numberReturned
  fields.writeInt32LE(1, 16);
  const length = HEADER_SIZE + fields.length + payload.length;
  return Buffer.concat([header(length, responseTo, OP_REPLY), fields, payload], length);
}
