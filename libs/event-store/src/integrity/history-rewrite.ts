import type { EventData, EventMetadata, NewEvent, RecordedEvent } from '../event-store.port';
import type { ChainBreak, HistoryHead } from './chain-verifier';

/**
 * What `history protect` does to a history, whether the store rewrites it in place (the embedded
 * store) or it is copied into a new database (EventStoreDB): the new data and metadata of each
 * event, and the event that records it.
 */
export interface HistoryRewrite {
  /** What each event of a page becomes, in order; null leaves it as it is. */
  rewrite(events: RecordedEvent[]): Promise<Array<{ data: EventData; metadata: EventMetadata } | null>>;
  /** The event recording the rewrite, appended last (only when an event changed, in place). */
  record(summary: HistoryRewriteSummary): { stream: string; event: NewEvent };
}

export interface HistoryRewriteSummary {
  /** The head before the rewrite, and the re-chained head the record chains to. */
  oldHead: HistoryHead;
  newHead: HistoryHead;
  /** The first event changed (the chain is recomputed from there on), and how many were. */
  firstChanged: string;
  changed: number;
  /** Of those, the events whose values were made null (`personalData: 'erased'`). */
  erased: number;
}

/** The history does not verify: it is not re-chained, which would make an edit look genuine. */
export class HistoryBrokenError extends Error {
  readonly code = 'history-broken';
  constructor(readonly broken: ChainBreak) {
    super(
      `The hash chain breaks at position ${broken.position} (${broken.reason}): the history is not rewritten ` +
        'over a break, which would make the edit look genuine (see audit verify)',
    );
    this.name = 'HistoryBrokenError';
  }
}
