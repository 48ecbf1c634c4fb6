import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUSTOMER_SEQUENCE_STREAM, customerStreamName } from '@chronicle/domain';
import { SqliteEventStore } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { FixedClock } from '../../shared/test-doubles.spec-helper';
import { CustomerNumberAllocator } from '../customer-number-allocator';
import { SeedCustomersCommand } from './seed-customers.command';
import { demoCustomer, SeedCustomersHandler } from './seed-customers.handler';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const CONTEXT: CommandContext = {
  actor: 'cli:ada',
  correlationId: 'c-seed',
  auth: { method: 'cli', tokenId: null },
};

describe('demoCustomer', () => {
  it.each([
    [0, 'Ada Lovelace'],
    [1, 'Alan Lovelace'],
    [9, 'Linus Lovelace'],
    [10, 'Ada Turing'],
    [23, 'Claude Liskov'],
    [89, 'Linus Johnson'],
    [90, 'Ada Lovelace'],
    [1234, 'Edsger Hopper'],
  ])('names customer %i %s, with a lower-case address of its own', (n, name) => {
    const [first, last] = name.split(' ');
    expect(demoCustomer(n)).toEqual({ name, email: `${first}.${last}.${n}@example.com`.toLowerCase() });
  });
});

describe('SeedCustomersHandler', () => {
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let numbers: CustomerNumberAllocator;
  let handler: SeedCustomersHandler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'seed-customers-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(NOW);
    numbers = new CustomerNumberAllocator(store, clock);
    handler = new SeedCustomersHandler(store, clock, numbers);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers `count` demo customers under the next numbers, and says which', async () => {
    await numbers.allocate(4, CONTEXT);
    const progress: number[] = [];

    const result = await handler.execute(new SeedCustomersCommand(3, CONTEXT, (n) => progress.push(n)));

    expect(result).toEqual({ created: 3, firstId: 5, lastId: 7 });
    expect(progress).toEqual([3]);
    for (const [id, n] of [
      [5, 1],
      [6, 2],
      [7, 3],
    ]) {
      expect(
        (await store.readStream(customerStreamName(id))).map((event) => [event.type, event.data]),
      ).toEqual([
        [
          'CustomerRegistered.v1',
          { customerId: id, ...demoCustomer(n), createdon: '2026-11-27T09:00:00.000Z' },
        ],
      ]);
    }
    expect(await store.readStream(customerStreamName(8))).toEqual([]);
    expect((await store.readStream(CUSTOMER_SEQUENCE_STREAM)).at(-1)?.metadata.actor).toBe('cli:ada');
  });

  it('registers nobody for a count of 0, and reports no progress', async () => {
    const onProgress = jest.fn();

    expect(await handler.execute(new SeedCustomersCommand(0, CONTEXT, onProgress))).toEqual({
      created: 0,
      firstId: null,
      lastId: null,
    });
    expect(onProgress).not.toHaveBeenCalled();
    expect(await store.headPosition()).toBeNull();
  });

  it('works in chunks of 2,000, reporting progress after each, with up to 256 appends at once', async () => {
    const append = store.append.bind(store);
    let inFlight = 0;
    let most = 0;
    const sequence: number[] = [];
    jest.spyOn(store, 'append').mockImplementation(async (stream, events, expected) => {
      if (stream === CUSTOMER_SEQUENCE_STREAM) sequence.push(events.length);
      else most = Math.max(most, ++inFlight);
      try {
        return await append(stream, events, expected);
      } finally {
        if (stream !== CUSTOMER_SEQUENCE_STREAM) inFlight--;
      }
    });
    const progress: number[] = [];

    const result = await handler.execute(new SeedCustomersCommand(2_001, CONTEXT, (n) => progress.push(n)));

    expect(result).toEqual({ created: 2_001, firstId: 1, lastId: 2_001 });
    expect(progress).toEqual([2_000, 2_001]);
    expect(sequence).toEqual([2_000, 1]);
    expect(most).toBe(256);
    expect((await store.readStream(customerStreamName(2_001)))[0].data).toMatchObject(demoCustomer(2_001));
    expect(await store.readStream(customerStreamName(2_002))).toEqual([]);
  });

  it('runs without a progress callback', async () => {
    expect(await handler.execute(new SeedCustomersCommand(1, CONTEXT))).toEqual({
      created: 1,
      firstId: 1,
      lastId: 1,
    });
  });
});
