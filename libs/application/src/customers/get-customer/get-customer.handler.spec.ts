import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { customerStreamName, ErasedError, NotFoundError } from '@chronicle/domain';
import { SqliteEventStore } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository, toNewEvent } from '../../shared/event-sourced-repository';
import { FixedClock } from '../../shared/test-doubles.spec-helper';
import { CustomerNumberAllocator } from '../customer-number-allocator';
import { registerCustomers } from '../register-customer/register-customer.handler';
import { GetCustomerQuery } from './get-customer.query';
import { GetCustomerHandler } from './get-customer.handler';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const CONTEXT: CommandContext = {
  actor: 'admin-1',
  correlationId: 'c-get',
  auth: { method: 'basic', tokenId: null },
};

describe('GetCustomerHandler', () => {
  let dir: string;
  let store: SqliteEventStore;
  let handler: GetCustomerHandler;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'get-customer-'));
    store = SqliteEventStore.open(dir);
    const clock = new FixedClock(NOW);
    handler = new GetCustomerHandler(new EventSourcedRepository(store, clock));
    // Given customer 1, Ada.
    await registerCustomers(
      store,
      clock,
      new CustomerNumberAllocator(store, clock),
      [{ name: 'Ada Lovelace', email: 'ada@example.com' }],
      CONTEXT,
    );
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const write = (customerId: number, type: string, data: Record<string, unknown>) =>
    store.append(customerStreamName(customerId), [toNewEvent({ type, data }, CONTEXT, new Date(NOW))], 'any');
  const get = (customerId: number) => handler.execute(new GetCustomerQuery(customerId));

  it('folds the customer from its stream, with the revision of its last event', async () => {
    expect(await get(1)).toEqual({
      customer: {
        exists: true,
        id: 1,
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        createdon: '2026-11-27T09:00:00.000Z',
      },
      revision: 0,
    });

    await write(1, 'CustomerChanged.v1', { customerId: 1, changes: { email: 'ada@lovelace.example' } });

    expect(await get(1)).toMatchObject({ customer: { id: 1, email: 'ada@lovelace.example' }, revision: 1 });
  });

  it('refuses a customer whose stream does not exist', async () => {
    await expect(get(2)).rejects.toThrow(new NotFoundError('Customer'));
    await expect(get(2)).rejects.toThrow('Customer not found');
  });

  it('refuses a stream that holds no registration', async () => {
    await write(2, 'CustomerChanged.v1', { customerId: 2, changes: { name: 'Nobody' } });

    await expect(get(2)).rejects.toThrow(NotFoundError);
  });

  it('refuses an erased customer as gone, saying when', async () => {
    await write(1, 'SubjectErased.v1', {
      subject: 'customer-1',
      kind: 'customer',
      erasedAt: '2026-11-27T09:30:00.000Z',
    });

    const refused = get(1);

    await expect(refused).rejects.toThrow(ErasedError);
    await expect(refused).rejects.toMatchObject({
      message: 'Customer was erased',
      erasedAt: '2026-11-27T09:30:00.000Z',
    });
  });
});
