import { RecordedEvent } from '../event-store.port';
import { recordedEvent } from '../new-event.spec-helper';
import { formatPosition, Position, position } from '../position';
import { ParkedMessage } from './checkpoint-store.port';
import { EventProcessing, PermanentFailure, ProcessorHandler } from './event-processing';

/**
 * The processing without a retry policy, as a replay runs it (a processor's, with retries, is
 * specified through EventProcessor in event-processor.spec.ts).
 */

const recorded = (at: number): RecordedEvent =>
  recordedEvent('Tested.v1', {
    id: `e${at}`,
    stream: 'stream-1',
    revision: at,
    position: position(at),
    hash: '',
  });

/** A synchronous handler, as the projections are: `fail` says what it throws on an event. */
class SyncHandler implements ProcessorHandler {
  readonly name = 'tested';
  readonly handled: string[] = [];
  readonly commits: string[] = [];
  fail: (event: RecordedEvent) => Error | null = () => null;
  commitFailure: Error | null = null;

  loadCheckpoint(): Promise<Position | null> {
    return Promise.resolve(null);
  }
  handle(event: RecordedEvent): void {
    const failure = this.fail(event);
    if (failure) throw failure;
    this.handled.push(event.id);
  }
  commit(upTo: Position): Promise<void> {
    if (this.commitFailure) return Promise.reject(this.commitFailure);
    this.commits.push(formatPosition(upTo));
    return Promise.resolve();
  }
}

describe('EventProcessing, one-shot', () => {
  let handler: SyncHandler;
  let parked: ParkedMessage[];
  let processing: EventProcessing;

  beforeEach(() => {
    handler = new SyncHandler();
    parked = [];
    processing = new EventProcessing(handler, {
      park: (message) => {
        parked.push(message);
        return Promise.resolve();
      },
    });
  });

  it('parks an event that fails for good, once, under the handler’s name, and goes on with the others', async () => {
    handler.fail = (event) => (event.id === 'e2' ? new PermanentFailure('no projection can use it') : null);

    await processing.process([recorded(1), recorded(2), recorded(3)], position(3));

    expect(handler.handled).toEqual(['e1', 'e3']);
    expect(handler.commits).toEqual(['3']);
    expect(processing.parked).toBe(1);
    expect(parked).toEqual([
      expect.objectContaining({
        processor: 'tested',
        eventId: 'e2',
        position: position(2),
        reason: 'no projection can use it',
        attempts: 1,
      }),
    ]);
  });

  it('ends the run at any other failure, parking and committing nothing', async () => {
    handler.fail = (event) => (event.id === 'e2' ? new RangeError('out of memory') : null);

    await expect(processing.process([recorded(1), recorded(2), recorded(3)], position(3))).rejects.toThrow(
      new RangeError('out of memory'),
    );

    expect(handler.handled).toEqual(['e1']);
    expect(handler.commits).toEqual([]);
    expect(parked).toEqual([]);
  });

  it('ends the run when the commit fails, without retrying it', async () => {
    handler.commitFailure = new Error('the read store is closed');

    await expect(processing.process([recorded(1)], position(1))).rejects.toThrow('the read store is closed');

    expect(handler.handled).toEqual(['e1']);
  });

  it('commits a checkpoint with no events: a read that ended past events the store skipped', async () => {
    await processing.process([], position(9));

    expect(handler.commits).toEqual(['9']);
    expect(handler.handled).toEqual([]);
  });
});
