import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../embedded/sqlite-event-store';
import { RecordedEvent } from '../event-store.port';
import { newEvent } from '../new-event.spec-helper';
import { formatPosition, Position, position } from '../position';
import { EventProcessing, ProcessorHandler } from './event-processing';
import { readToEnd } from './read-to-end';

/** What the one-shot consumer hands over: each event handled, each batch's commit. */
class RecordingHandler implements ProcessorHandler {
  readonly name = 'replayed';
  readonly handled: string[] = [];
  readonly commits: string[] = [];

  loadCheckpoint(): Promise<Position | null> {
    return Promise.resolve(null);
  }
  handle(event: RecordedEvent): void {
    this.handled.push(`${event.type}@${formatPosition(event.position)}`);
  }
  commit(upTo: Position): Promise<void> {
    this.commits.push(`${formatPosition(upTo)} after ${this.handled.length}`);
    return Promise.resolve();
  }
}

describe('readToEnd, the one-shot consumer of a replay', () => {
  let dataDir: string;
  let store: SqliteEventStore;
  let handler: RecordingHandler;
  let processing: EventProcessing;

  /** Appends one event of each type, in order, each in a stream of its own: positions 1, 2, 3... */
  async function given(...types: string[]): Promise<void> {
    for (const [i, type] of types.entries()) await store.append(`s-${i}`, [newEvent(type)], 'no_stream');
  }

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'read-to-end-'));
    store = SqliteEventStore.open(dataDir);
    handler = new RecordingHandler();
    processing = new EventProcessing(handler, { park: () => Promise.resolve() });
  });

  afterEach(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('hands the whole log over in batches of the size asked, each committed at its last event', async () => {
    await given('A.v1', 'A.v1', 'A.v1', 'A.v1', 'A.v1');
    const batches: string[] = [];

    const result = await readToEnd(store, processing, {
      exceptTypes: [],
      batchSize: 2,
      onBatch: (events, at) => batches.push(`${events} to ${formatPosition(at)}`),
    });

    expect(handler.handled).toEqual(['A.v1@1', 'A.v1@2', 'A.v1@3', 'A.v1@4', 'A.v1@5']);
    expect(handler.commits).toEqual(['2 after 2', '4 after 4', '5 after 5']);
    expect(batches).toEqual(['2 to 2', '4 to 4', '5 to 5']);
    expect(result).toEqual({ events: 5, position: position(5) });
  });

  it('reads after the position given, not from the first event', async () => {
    await given('A.v1', 'A.v1', 'A.v1', 'A.v1');

    const result = await readToEnd(store, processing, { after: position(2), exceptTypes: [], batchSize: 10 });

    expect(handler.handled).toEqual(['A.v1@3', 'A.v1@4']);
    expect(handler.commits).toEqual(['4 after 2']);
    expect(result).toEqual({ events: 2, position: position(4) });
  });

  it('skips the types left out, and commits the head when the read ended before it', async () => {
    await given('A.v1', 'Skipped.v1', 'A.v1', 'Skipped.v1', 'Skipped.v1');

    const result = await readToEnd(store, processing, { exceptTypes: ['Skipped.v1'], batchSize: 10 });

    expect(handler.handled).toEqual(['A.v1@1', 'A.v1@3']);
    // The last batch at 3, then the head: the skipped events there change nothing, but are accounted for.
    expect(handler.commits).toEqual(['3 after 2', '5 after 2']);
    expect(result).toEqual({ events: 2, position: position(5) });
  });

  it('commits the head alone when every event after the position is skipped', async () => {
    await given('A.v1', 'Skipped.v1', 'Skipped.v1');

    const result = await readToEnd(store, processing, {
      after: position(1),
      exceptTypes: ['Skipped.v1'],
      batchSize: 10,
    });

    expect(handler.handled).toEqual([]);
    expect(handler.commits).toEqual(['3 after 0']);
    expect(result).toEqual({ events: 0, position: position(3) });
  });

  it('commits nothing more when the read reached the head', async () => {
    await given('A.v1', 'A.v1');

    await readToEnd(store, processing, { exceptTypes: [], batchSize: 1 });

    expect(handler.commits).toEqual(['1 after 1', '2 after 2']);
  });

  it('answers no events and the position given for a log with nothing after it', async () => {
    await given('A.v1', 'A.v1');

    const result = await readToEnd(store, processing, { after: position(2), exceptTypes: [], batchSize: 10 });

    expect(handler.commits).toEqual([]);
    expect(result).toEqual({ events: 0, position: position(2) });
  });

  it('answers no events and no position for an empty log', async () => {
    const result = await readToEnd(store, processing, { exceptTypes: [], batchSize: 10 });

    expect(handler.commits).toEqual([]);
    expect(result).toEqual({ events: 0, position: null });
  });

  it('stops between batches once aborted: what was committed stays, nothing more is', async () => {
    await given('A.v1', 'A.v1', 'A.v1', 'A.v1', 'A.v1');
    const stop = new AbortController();

    const replay = readToEnd(store, processing, {
      exceptTypes: [],
      batchSize: 2,
      signal: stop.signal,
      onBatch: (events) => {
        if (events === 2) stop.abort(new Error('stopped by the operator'));
      },
    });

    await expect(replay).rejects.toThrow('stopped by the operator');
    expect(handler.commits).toEqual(['2 after 2']);
  });

  it('does not commit the head once aborted after the last batch', async () => {
    await given('A.v1', 'Skipped.v1');
    const stop = new AbortController();

    const replay = readToEnd(store, processing, {
      exceptTypes: ['Skipped.v1'],
      batchSize: 10,
      signal: stop.signal,
      onBatch: () => stop.abort(new Error('stopped by the operator')),
    });

    await expect(replay).rejects.toThrow('stopped by the operator');
    expect(handler.commits).toEqual(['1 after 1']);
  });
});
