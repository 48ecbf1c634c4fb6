import { hash } from 'node:crypto';

/**
 * What one hash chains to its predecessor. `log`: the whole history in position order, one chain
 * (the embedded store, which orders the log itself). `stream`: one chain per stream in revision
 * order (EventStoreDB, whose server orders `$all` after the writer has made the hash).
 */
export type ChainScope = 'log' | 'stream';

/** The predecessor of the first event of a chain. */
export const GENESIS_HASH = '0'.repeat(64);

/** One event as the chain sees it: the texts as stored, never upcast or re-encoded. */
export interface ChainLink {
  /** The formatted position (`42`, or `42:40` on EventStoreDB). */
  position: string;
  id: string;
  stream: string;
  revision: number;
  type: string;
  /** The data and metadata as the JSON text that was written (metadata without the hash itself). */
  data: string;
  metadata: string;
  recordedAt: string;
  /** The hash stored with the event. */
  hash: string;
}

/**
 * The event's canonical encoding chained to `previous`, the text its hash is the SHA-256 of: the
 * JSON array `["chronicle-chain-1", position, id, stream, revision, type, data, metadata,
 * recordedAt, previous]`, data and metadata as JSON strings holding the text written. On the
 * `stream` scope position and recordedAt are null: the server assigns both after the hash is made.
 * The one definition of what the chain covers (the audit serves its parts, docs/audit-integrity.md).
 */
export function chainEncoding(scope: ChainScope, link: Omit<ChainLink, 'hash'>, previous: string): string {
  const log = scope === 'log';
  return JSON.stringify([
    'chronicle-chain-1',
    log ? link.position : null,
    link.id,
    link.stream,
    link.revision,
    link.type,
    link.data,
    link.metadata,
    log ? link.recordedAt : null,
    previous,
  ]);
}

/**
 * SHA-256 (hex) of the UTF-8 bytes of the event's {@link chainEncoding}. One-shot: every append
 * and every start's walk of the chain hashes each event, and a `Hash` object per event cost a
 * quarter more CPU and left its native context to the garbage collector.
 */
export function chainHash(scope: ChainScope, link: Omit<ChainLink, 'hash'>, previous: string): string {
  return hash('sha256', chainEncoding(scope, link, previous), 'hex');
}
