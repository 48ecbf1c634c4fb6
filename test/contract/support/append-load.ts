import { type EventStore, type ExpectedRevision, WrongExpectedRevisionError } from '@chronicle/event-store';
import { setTimeout as sleep } from 'node:timers/promises';
import { newEvent } from './events';

export interface AppendLoad {
  /** Streams every writer (in every process) appends to, contending on their revisions. */
  sharedStreams: string[];
  /** Streams `<prefix>-<worker>` belong to one worker of this writer only. */
  ownStreamPrefix: string;
  /** Concurrent workers in this process. */
  workers: number;
  appendsPerWorker: number;
  /** Pause after each of a worker's appends. */
  delayMs: number;
}

function eventsInAppend(index: number): number {
  return index % 3 === 0 ? 2 : 1;
}

/** How many events a run of `load` writes. */
export function eventCount(load: AppendLoad): number {
  let perWorker = 0;
  for (let i = 0; i < load.appendsPerWorker; i++) perWorker += eventsInAppend(i);
  return perWorker * load.workers;
}

/**
 * Appends with exact expected revisions as an application would: on a conflict it retries with
 * the actual revision. Every third append holds two events. Returns the ids of the events written.
 */
export async function runAppendLoad(store: EventStore, load: AppendLoad): Promise<string[]> {
  const written: string[] = [];
  const known = new Map<string, ExpectedRevision>();

  async function appendWithRetry(stream: string, eventCount: number): Promise<void> {
    const events = Array.from({ length: eventCount }, () => newEvent({ stream }));
    for (let attempt = 0; attempt < 1000; attempt++) {
      try {
        const result = await store.append(stream, events, known.get(stream) ?? 'no_stream');
        known.set(stream, result.nextExpectedRevision);
        written.push(...events.map((e) => e.id));
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        known.set(stream, error.actual);
      }
    }
    throw new Error(`${stream}: still conflicting after 1000 attempts`);
  }

  async function work(worker: number): Promise<void> {
    for (let i = 0; i < load.appendsPerWorker; i++) {
      const shared = load.sharedStreams.length > 0 && i % 2 === 0;
      const stream = shared
        ? load.sharedStreams[(worker + i) % load.sharedStreams.length]
        : `${load.ownStreamPrefix}-${worker}`;
      await appendWithRetry(stream, eventsInAppend(i));
      if (load.delayMs > 0) await sleep(load.delayMs);
    }
  }

  await Promise.all(Array.from({ length: load.workers }, (_, worker) => work(worker)));
  return written;
}
