import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUSTOMER_SEQUENCE_STREAM, customerStreamName, ValidationError } from '@chronicle/domain';
import { SqliteEventStore } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { FixedClock } from '../../shared/test-doubles.spec-helper';
import { CustomerNumberAllocator } from '../customer-number-allocator';
import { RegisterCustomerCommand } from './register-customer.command';
import { registerCustomers, RegisterCustomerHandler } from './register-customer.handler';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const CONTEXT: CommandContext = {
  actor: 'admin-1',
  correlationId: 'c-register',
  auth: { method: 'basic', tokenId: null },
};

describe('registering customers', () => {
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let numbers: CustomerNumberAllocator;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'register-customer-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(NOW);
    numbers = new CustomerNumberAllocator(store, clock);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ada = { name: 'Ada Lovelace', email: 'ada@example.com' };
  const grace = { name: 'Grace Hopper', email: 'grace@example.com' };
  const alan = { name: 'Alan Turing', email: 'alan@example.com' };

  describe('RegisterCustomerHandler', () => {
    const register = (fields: Record<string, unknown>) =>
      new RegisterCustomerHandler(store, clock, numbers).execute(
        new RegisterCustomerCommand(fields, CONTEXT),
      );

    it('registers the customer under the next number, as the first event of its own stream', async () => {
      const result = await register(ada);

      expect(result).toEqual({
        customer: { exists: true, id: 1, ...ada, createdon: '2026-11-27T09:00:00.000Z' },
        revision: 0,
      });
      const [event, ...more] = await store.readStream(customerStreamName(1));
      expect(more).toEqual([]);
      expect(event).toMatchObject({
        revision: 0,
        type: 'CustomerRegistered.v1',
        data: { customerId: 1, ...ada, createdon: '2026-11-27T09:00:00.000Z' },
        metadata: {
          actor: 'admin-1',
          correlationId: 'c-register',
          auth: { method: 'basic', tokenId: null },
          occurredAt: '2026-11-27T09:00:00.000Z',
        },
      });
    });

    it('registers the next customer under the next number', async () => {
      await register(ada);
      clock.time = NOW + 60_000;

      const result = await register(grace);

      expect(result).toEqual({
        customer: { exists: true, id: 2, ...grace, createdon: '2026-11-27T09:01:00.000Z' },
        revision: 0,
      });
      expect((await store.readStream(customerStreamName(2))).map((event) => event.data)).toEqual([
        { customerId: 2, ...grace, createdon: '2026-11-27T09:01:00.000Z' },
      ]);
    });

    it('refuses invalid fields before a number is spent', async () => {
      await expect(register({ name: 'Ada Lovelace', email: 'not an address' })).rejects.toThrow(
        ValidationError,
      );
      await expect(register({ name: 'Ada Lovelace' })).rejects.toMatchObject({
        errors: [{ field: 'email', message: 'is required' }],
      });

      expect(await store.headPosition()).toBeNull();
      expect((await register(ada)).customer.id).toBe(1);
    });
  });

  describe('registerCustomers', () => {
    it('registers each customer under its own number, in the order given, whatever the concurrency', async () => {
      const registered = await registerCustomers(store, clock, numbers, [ada, grace, alan], CONTEXT, 2);

      expect(registered).toEqual([
        { exists: true, id: 1, ...ada, createdon: '2026-11-27T09:00:00.000Z' },
        { exists: true, id: 2, ...grace, createdon: '2026-11-27T09:00:00.000Z' },
        { exists: true, id: 3, ...alan, createdon: '2026-11-27T09:00:00.000Z' },
      ]);
      for (const [id, fields] of [ada, grace, alan].entries()) {
        expect((await store.readStream(customerStreamName(id + 1))).map((event) => event.data)).toEqual([
          { customerId: id + 1, ...fields, createdon: '2026-11-27T09:00:00.000Z' },
        ]);
      }
      // One append of the sequence for all of them.
      expect((await store.readStream(CUSTOMER_SEQUENCE_STREAM)).map((event) => event.data)).toEqual([
        { customerId: 1 },
        { customerId: 2 },
        { customerId: 3 },
      ]);
    });

    it('appends each stream as a new one, one at a time by default and up to `concurrency` at once', async () => {
      const append = store.append.bind(store);
      let inFlight = 0;
      let most = 0;
      const streams: string[] = [];
      jest.spyOn(store, 'append').mockImplementation(async (stream, events, expected) => {
        if (stream !== CUSTOMER_SEQUENCE_STREAM) {
          streams.push(`${stream} ${String(expected)}`);
          most = Math.max(most, ++inFlight);
        }
        try {
          return await append(stream, events, expected);
        } finally {
          if (stream !== CUSTOMER_SEQUENCE_STREAM) inFlight--;
        }
      });

      await registerCustomers(store, clock, numbers, [ada, grace, alan], CONTEXT);
      expect(most).toBe(1);
      await registerCustomers(store, clock, numbers, [ada, grace, alan, ada], CONTEXT, 3);
      expect(most).toBe(3);

      expect(streams).toEqual(Array.from({ length: 7 }, (_, i) => `customer-${i + 1} no_stream`));
    });

    it("dates each customer by the clock when it is registered, and stamps its event's metadata so", async () => {
      const ticking = {
        now: () => {
          const now = new Date(clock.time);
          clock.time += 1_000;
          return now;
        },
      };

      const registered = await registerCustomers(store, ticking, numbers, [ada, grace], CONTEXT);

      expect(registered.map((customer) => customer.createdon)).toEqual([
        '2026-11-27T09:00:00.000Z',
        '2026-11-27T09:00:01.000Z',
      ]);
      const second = await store.readStream(customerStreamName(2));
      expect(second[0].metadata.occurredAt).toBe('2026-11-27T09:00:01.000Z');
    });

    it('registers nobody if one of the customers is invalid', async () => {
      await expect(
        registerCustomers(store, clock, numbers, [ada, { ...grace, age: 3 }], CONTEXT, 2),
      ).rejects.toMatchObject({ errors: [{ field: 'age', message: 'is not a field that can be changed' }] });

      expect(await store.headPosition()).toBeNull();
    });
  });
});
