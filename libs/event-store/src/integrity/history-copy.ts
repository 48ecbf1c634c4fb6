import type { EventStore, NewEvent, RecordedEvent } from '../event-store.port';
import { comparePositions, formatPosition, parsePosition, type Position } from '../position';
import { verifyChain } from './chain-verifier';
import { HistoryBrokenError, type HistoryRewrite, type HistoryRewriteSummary } from './history-rewrite';

/** Source events read and rewritten at once: one call to the key store per page. */
const COPY_PAGE = 256;
/** Events of one stream appended in one call at most (well under the server's 1 MiB append). */
const APPEND_MAX = 64;

/** Why `history protect --to` did not copy: the databases are not as a copy needs them. */
export class HistoryCopyError extends Error {
  constructor(
    readonly code: 'source-empty' | 'target-not-empty' | 'source-changed',
    message: string,
  ) {
    super(message);
    this.name = 'HistoryCopyError';
  }
}

export interface HistoryCopyResult extends HistoryRewriteSummary {
  /** Where the record went in the target. */
  recorded: Position;
  /** Events copied by this run; the rest (`resumed`) were copied by a run cut short before it. */
  copied: number;
  resumed: number;
}

interface Tally {
  /** The first event of the source copied, by this run or one before. */
  first: Position | null;
  changed: number;
  erased: number;
  firstChanged: string | null;
}

/**
 * `history protect` where events cannot be rewritten (EventStoreDB): the source's history is copied
 * into `target`, an empty database, in the source's order, each event with its id, type, stream and
 * revision, its data and metadata as `rewrite` makes them; the target's own append chains them. Then
 * the record of both heads is appended to the target: only a complete copy has it.
 *
 * Resumable: a run cut short leaves a prefix of the source's order in the target (each append is
 * atomic), and the next run checks that prefix event by event and goes on after it. A target holding
 * anything else (another history, a copy of an older head, plaintext) is refused. A source written
 * to during the copy is refused at its end, before the record: writers must be stopped.
 * `beforeRecord` runs once the copy is whole and verified, before the record: what must hold when
 * the copy is done. Returns null when the target already holds the complete copy of the source as
 * it is (and runs nothing).
 */
export async function copyHistory(
  source: EventStore,
  target: EventStore,
  rewrite: HistoryRewrite,
  recordType: string,
  beforeRecord: () => Promise<void> = () => Promise.resolve(),
): Promise<HistoryCopyResult | null> {
  const before = await verifyChain(source.readChain(), source.chainScope);
  if (before.broken !== null) throw new HistoryBrokenError(before.broken);
  if (before.head === null)
    throw new HistoryCopyError('source-empty', 'The source history is empty: nothing to copy');
  const oldHead = before.head;
  const upTo = parsePosition(oldHead.position)!;
  const tally: Tally = { first: null, changed: 0, erased: 0, firstChanged: null };

  const prefix = await copiedPrefix(source, target, rewrite, recordType, upTo, tally);
  if (prefix === 'complete') return null;
  let copied = 0;
  let page: RecordedEvent[] = [];
  for await (const event of source.readAll({ after: prefix.after })) {
    if (comparePositions(event.position, upTo) > 0) break;
    page.push(event);
    if (page.length < COPY_PAGE) continue;
    copied += await copyPage(target, rewrite, page, tally);
    page = [];
  }
  if (page.length > 0) copied += await copyPage(target, rewrite, page, tally);

  const head = await source.headPosition();
  if (head === null || comparePositions(head, upTo) !== 0) {
    throw new HistoryCopyError(
      'source-changed',
      `The source was written to during the copy (its head moved past ${oldHead.position}): the copy lacks ` +
        'those events and is not recorded as done. Stop every writer, then copy again into a new, empty database',
    );
  }
  const after = await verifyChain(target.readChain(), target.chainScope);
  if (after.broken !== null) throw new HistoryBrokenError(after.broken);
  const summary: HistoryRewriteSummary = {
    oldHead,
    newHead: after.head!,
    // With nothing to protect the copy is still a new history: it starts at the first event.
    firstChanged: tally.firstChanged ?? formatPosition(tally.first!),
    changed: tally.changed,
    erased: tally.erased,
  };
  const { stream, event } = rewrite.record(summary);
  // Done before the record: a run that ends in between does it again, and none after one recorded.
  await beforeRecord();
  const { position } = await target.append(stream, [event], 'any');
  return { ...summary, recorded: position, copied, resumed: prefix.events };
}

/**
 * What a run cut short left in the target: its events must be the source's first ones, in order,
 * and protected. `complete` when they are all of the source up to `upTo` followed by the record.
 */
async function copiedPrefix(
  source: EventStore,
  target: EventStore,
  rewrite: HistoryRewrite,
  recordType: string,
  upTo: Position,
  tally: Tally,
): Promise<{ after?: Position; events: number } | 'complete'> {
  const sourceEvents = source.readAll()[Symbol.asyncIterator]();
  let after: Position | undefined;
  let events = 0;
  let unchecked: RecordedEvent[] = [];
  try {
    for await (const copy of target.readAll()) {
      const next = await sourceEvents.next();
      const original = next.done ? null : next.value;
      if (original !== null && comparePositions(original.position, upTo) <= 0 && isCopyOf(copy, original)) {
        if (
          JSON.stringify([copy.data, copy.metadata]) !== JSON.stringify([original.data, original.metadata])
        ) {
          count(tally, original, copy.metadata);
        }
        tally.first ??= original.position;
        after = original.position;
        events++;
        unchecked.push(copy);
        if (unchecked.length === COPY_PAGE) {
          await assertProtected(rewrite, unchecked);
          unchecked = [];
        }
        continue;
      }
      // The whole source copied, then the record: done (whatever the target holds since).
      if (copy.type === recordType && after !== undefined && comparePositions(after, upTo) === 0)
        return 'complete';
      throw new HistoryCopyError(
        'target-not-empty',
        copy.type === recordType
          ? 'The target holds a finished copy of an older head of the source: the source was written to ' +
              'since. Copy again into a new, empty database'
          : `The target is not empty, and not a copy of this source cut short (its event ${copy.id} in ` +
              `${copy.stream}@${copy.revision} is not the source's next one): give a new, empty database`,
      );
    }
  } finally {
    await sourceEvents.return?.();
  }
  if (unchecked.length > 0) await assertProtected(rewrite, unchecked);
  return { after, events };
}

function isCopyOf(copy: RecordedEvent, original: RecordedEvent): boolean {
  return (
    copy.id === original.id &&
    copy.stream === original.stream &&
    copy.revision === original.revision &&
    copy.type === original.type
  );
}

/** The copies left by a run cut short must need no protection: else this is no copy (the source itself?). */
async function assertProtected(rewrite: HistoryRewrite, copies: RecordedEvent[]): Promise<void> {
  const unprotected = (await rewrite.rewrite(copies)).findIndex((replacement) => replacement !== null);
  if (unprotected < 0) return;
  const { stream, revision } = copies[unprotected];
  throw new HistoryCopyError(
    'target-not-empty',
    `The target holds personal values in plaintext (${stream}@${revision}): it is no protected copy ` +
      '(is it the source itself?). Give a new, empty database',
  );
}

function count(tally: Tally, original: RecordedEvent, metadata: RecordedEvent['metadata']): void {
  tally.changed++;
  if (metadata.personalData === 'erased') tally.erased++;
  tally.firstChanged ??= formatPosition(original.position);
}

/** One page rewritten, then appended run by run of one stream, at the source's revisions. */
async function copyPage(
  target: EventStore,
  rewrite: HistoryRewrite,
  page: RecordedEvent[],
  tally: Tally,
): Promise<number> {
  tally.first ??= page[0].position;
  const replacements = await rewrite.rewrite(page);
  const copies: NewEvent[] = page.map((event, index) => {
    const replacement = replacements[index];
    if (replacement !== null) count(tally, event, replacement.metadata);
    return {
      id: event.id,
      type: event.type,
      data: replacement?.data ?? event.data,
      metadata: replacement?.metadata ?? event.metadata,
    };
  });
  let start = 0;
  for (let end = 1; end <= page.length; end++) {
    if (end < page.length && page[end].stream === page[start].stream && end - start < APPEND_MAX) continue;
    const { stream, revision } = page[start];
    await target.append(stream, copies.slice(start, end), revision === 0 ? 'no_stream' : revision - 1);
    start = end;
  }
  return page.length;
}
