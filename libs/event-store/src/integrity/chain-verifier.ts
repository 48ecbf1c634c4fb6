import { createHash } from 'node:crypto';
import type { ChainRef, LinkedChainLink } from '../event-store.port';
import { comparePositions, formatPosition, parsePosition, type Position } from '../position';
import { chainHash, type ChainLink, type ChainScope, GENESIS_HASH } from './history-chain';

/**
 * The head of a history: its last position, the hash that stands for everything up to it, and its
 * recorded time. On the `log` scope the hash is the last event's; on the `stream` scope it is the
 * digest of every stream's last hash (see {@link headDigest}).
 */
export interface HistoryHead {
  position: string;
  hash: string;
  recordedAt: string;
}

/** Where the chain breaks: the first event whose stored hash is not the one its content gives. */
export interface ChainBreak {
  position: string;
  stream: string;
  revision: number;
  reason: string;
}

export interface ChainVerification {
  scope: ChainScope;
  /** Events walked, the broken one included. */
  events: number;
  /** The head walked up to; null for an empty history. */
  head: HistoryHead | null;
  /** The last event that chains, as stored: where a later walk of what follows can start. */
  last: ChainLink | null;
  /** The first break, or null when every event chains to its predecessor. */
  broken: ChainBreak | null;
  /** Against a kept seal: null when it matches (or none was given), else why not. */
  sealMismatch: string | null;
}

/**
 * Walks `links` (global order) and checks that each stored hash is the one its content and its
 * predecessor's hash give, stopping at the first that is not. With a `seal` (a head kept
 * elsewhere), the history must reach the sealed position with the sealed hash: a history cut short,
 * or rewritten up to there with hashes made anew, does not. With `upTo`, the walk ends there (an
 * export's head), whatever was appended since.
 */
export async function verifyChain(
  links: AsyncIterable<ChainLink> | Iterable<ChainLink>,
  scope: ChainScope,
  seal: HistoryHead | null = null,
  upTo: Position | null = null,
): Promise<ChainVerification> {
  const streams = new Map<string, { revision: number; hash: string }>();
  let last: ChainLink | null = null;
  let events = 0;
  let broken: ChainBreak | null = null;
  let sealReached = false;
  let sealMismatch: string | null = null;
  for await (const link of links) {
    if (upTo !== null && comparePositions(parsePosition(link.position) ?? upTo, upTo) > 0) break;
    events++;
    const previous = scope === 'log' ? last : (streams.get(link.stream) ?? null);
    broken = linkBreak(scope, link, previous);
    if (broken !== null) break;
    last = link;
    if (scope === 'stream') streams.set(link.stream, { revision: link.revision, hash: link.hash });
    if (seal !== null && link.position === seal.position) {
      sealReached = true;
      const sealed = headOf(scope, link, streams);
      sealMismatch =
        sealed.hash === seal.hash && sealed.recordedAt === seal.recordedAt
          ? null
          : `the history up to the sealed position ${seal.position} is not the one sealed ` +
            `(hash ${sealed.hash}, sealed ${seal.hash})`;
    }
  }
  const head = last === null ? null : headOf(scope, last, streams);
  if (seal !== null && !sealReached && broken === null) {
    sealMismatch =
      `the sealed position ${seal.position} is not in the history ` +
      `(${head === null ? 'it is empty' : `it ends at ${head.position}`}): the history was cut short or rewritten`;
  }
  return { scope, events, head, last, broken, sealMismatch };
}

/** What a link chains to: its predecessor's stored hash (and, on the log, its recorded time). */
export interface ChainPredecessor {
  hash: string;
  recordedAt?: string;
}

/**
 * Where `link` breaks the chain, given the link it chains to (`previous`: the log's event before it,
 * or its stream's; null for the first of a chain), or null when its stored hash is the one its
 * content and `previous` give. The one check of an event, whether the whole chain is walked or
 * only the events a page serves.
 */
export function linkBreak(
  scope: ChainScope,
  link: ChainLink,
  previous: ChainPredecessor | null,
): ChainBreak | null {
  const at = (reason: string): ChainBreak => ({
    position: link.position,
    stream: link.stream,
    revision: link.revision,
    reason,
  });
  if (scope === 'log' && previous?.recordedAt !== undefined && link.recordedAt < previous.recordedAt) {
    return at(`recordedAt ${link.recordedAt} is before its predecessor's ${previous.recordedAt}`);
  }
  // No check of revisions following on in a stream: it may hold the server's own events between ours.
  const computed = chainHash(scope, link, previous?.hash ?? GENESIS_HASH);
  if (computed !== link.hash) {
    return at(
      `the stored hash ${link.hash || '(none)'} is not ${computed}: the event, or the one before it, ` +
        'was changed, inserted or removed',
    );
  }
  return null;
}

/** Where an event read earlier breaks the chain as stored now (readChainLinks), or null. */
export function storedLinkBreak(
  scope: ChainScope,
  event: ChainRef,
  { link, previous }: LinkedChainLink,
): ChainBreak | null {
  if (link === null) {
    const { stream, revision } = event;
    return {
      position: formatPosition(event.position),
      stream,
      revision,
      reason: 'the event is no longer stored',
    };
  }
  return linkBreak(scope, link, previous);
}

function headOf(
  scope: ChainScope,
  last: ChainLink,
  streams: Map<string, { revision: number; hash: string }>,
): HistoryHead {
  return {
    position: last.position,
    hash: scope === 'log' ? last.hash : headDigest(streams),
    recordedAt: last.recordedAt,
  };
}

/**
 * One hash for every stream's chain: SHA-256 over `stream \n revision \n hash \n` of each stream,
 * sorted by stream name. A stream cut short, or one missing, gives another digest.
 */
export function headDigest(streams: ReadonlyMap<string, { revision: number; hash: string }>): string {
  const digest = createHash('sha256');
  for (const stream of [...streams.keys()].sort()) {
    const { revision, hash } = streams.get(stream)!;
    digest.update(`${stream}\n${revision}\n${hash}\n`);
  }
  return digest.digest('hex');
}
