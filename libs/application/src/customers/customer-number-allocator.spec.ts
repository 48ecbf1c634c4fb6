import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUSTOMER_SEQUENCE_STREAM } from '@chronicle/domain';
import { SqliteEventStore, WrongExpectedRevisionError } from '@chronicle/event-store';
import { ConcurrencyConflictError } from '../shared/application-errors';
import { CommandContext } from '../shared/command-context';
import { FixedClock } from '../shared/test-doubles.spec-helper';
import { CustomerNumberAllocator } from './customer-number-allocator';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const CONTEXT: CommandContext = {
  actor: 'admin-1',
  correlationId: 'c-allocate',
  clientRequestId: 'r-1',
  auth: { method: 'bearer', tokenId: 't-1' },
};

describe('CustomerNumberAllocator', () => {
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let allocator: CustomerNumberAllocator;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'customer-numbers-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(NOW);
    allocator = new CustomerNumberAllocator(store, clock);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sequence = () => store.readStream(CUSTOMER_SEQUENCE_STREAM);

  it('hands out 1, 2, 3 on a new sequence, one event per number, with the caller as metadata', async () => {
    const append = jest.spyOn(store, 'append');

    const ids = await allocator.allocate(3, CONTEXT);

    expect(ids).toEqual([1, 2, 3]);
    expect(append).toHaveBeenCalledTimes(1);
    expect(append.mock.calls[0][2]).toBe('no_stream');
    const events = await sequence();
    expect(events.map((event) => [event.revision, event.type, event.data])).toEqual([
      [0, 'CustomerNumberAssigned.v1', { customerId: 1 }],
      [1, 'CustomerNumberAssigned.v1', { customerId: 2 }],
      [2, 'CustomerNumberAssigned.v1', { customerId: 3 }],
    ]);
    expect(events[0].metadata).toMatchObject({
      actor: 'admin-1',
      correlationId: 'c-allocate',
      clientRequestId: 'r-1',
      auth: { method: 'bearer', tokenId: 't-1' },
      causationId: null,
      occurredAt: '2026-11-27T09:00:00.000Z',
    });
  });

  it('goes on from the revision it appended last, without reading the sequence', async () => {
    await allocator.allocate(2, CONTEXT);
    const append = jest.spyOn(store, 'append');
    const read = jest.spyOn(store, 'readStream');
    clock.time = NOW + 1_000;

    const ids = await allocator.allocate(2, CONTEXT);

    expect(ids).toEqual([3, 4]);
    expect(append).toHaveBeenCalledTimes(1);
    expect(append.mock.calls[0][2]).toBe(1);
    expect(read).not.toHaveBeenCalled();
    const events = await sequence();
    expect(events.map((event) => event.data.customerId)).toEqual([1, 2, 3, 4]);
    expect(events[2].metadata.occurredAt).toBe('2026-11-27T09:00:01.000Z');
  });

  it('starts again where another process left the sequence, when that process appended meanwhile', async () => {
    const other = new CustomerNumberAllocator(store, clock);
    expect(await allocator.allocate(2, CONTEXT)).toEqual([1, 2]);
    // The other process has never appended: its first try (no stream) conflicts, the second wins.
    expect(await other.allocate(3, CONTEXT)).toEqual([3, 4, 5]);
    // This one last saw revision 1: it conflicts once, then appends after revision 4.
    const append = jest.spyOn(store, 'append');

    expect(await allocator.allocate(1, CONTEXT)).toEqual([6]);

    expect(append.mock.calls.map((call) => call[2])).toEqual([1, 4]);
    expect((await sequence()).map((event) => event.data.customerId)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('runs the allocations of one process in turn, so that they never conflict with each other', async () => {
    const append = jest.spyOn(store, 'append');

    const [first, second, third] = await Promise.all([
      allocator.allocate(2, CONTEXT),
      allocator.allocate(3, CONTEXT),
      allocator.allocate(1, CONTEXT),
    ]);

    expect([first, second, third]).toEqual([[1, 2], [3, 4, 5], [6]]);
    expect(append.mock.calls.map((call) => call[2])).toEqual(['no_stream', 1, 4]);
  });

  it('fails an allocation on any other error of the store at once, and the next one still runs', async () => {
    const spy = jest.spyOn(store, 'append').mockRejectedValueOnce(new Error('disk full'));

    const [failed, next] = await Promise.allSettled([
      allocator.allocate(2, CONTEXT),
      allocator.allocate(2, CONTEXT),
    ]);

    expect(failed).toEqual({ status: 'rejected', reason: new Error('disk full') });
    expect(next).toEqual({ status: 'fulfilled', value: [1, 2] });
    expect(spy).toHaveBeenCalledTimes(2);
    expect(await allocator.allocate(1, CONTEXT)).toEqual([3]);
  });

  it('gives up with a conflict after 20 attempts that other writers all won', async () => {
    let actual = 0;
    const spy = jest.spyOn(store, 'append').mockImplementation((stream, _events, expected) => {
      // A writer that kept trying would be told so, rather than loop for ever.
      if (actual >= 100) return Promise.reject(new Error('an attempt after the 20th'));
      actual += 5;
      return Promise.reject(new WrongExpectedRevisionError(stream, expected, actual));
    });

    const refused = allocator.allocate(1, CONTEXT);

    await expect(refused).rejects.toThrow(ConcurrencyConflictError);
    await expect(refused).rejects.toMatchObject({ stream: CUSTOMER_SEQUENCE_STREAM });
    expect(spy).toHaveBeenCalledTimes(20);
    // Each attempt starts from the revision the conflict before it told.
    expect(spy.mock.calls.map((call) => call[2])).toEqual([
      'no_stream',
      ...Array.from({ length: 19 }, (_, i) => 5 * (i + 1)),
    ]);
    expect(spy.mock.calls[1][1].map((event) => event.data)).toEqual([{ customerId: 7 }]);
  });
});
