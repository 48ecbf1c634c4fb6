import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { customerStreamName, NotFoundError, ValidationError } from '@chronicle/domain';
import { SqliteEventStore } from '@chronicle/event-store';
import { PreconditionFailedError } from '../../shared/application-errors';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { FixedClock } from '../../shared/test-doubles.spec-helper';
import { CustomerNumberAllocator } from '../customer-number-allocator';
import { registerCustomers } from '../register-customer/register-customer.handler';
import { ChangeCustomerCommand } from './change-customer.command';
import { ChangeCustomerHandler } from './change-customer.handler';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const CONTEXT: CommandContext = {
  actor: 'admin-1',
  correlationId: 'c-change',
  auth: { method: 'bearer', tokenId: 't-1' },
};
const ADA = {
  exists: true,
  id: 1,
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  createdon: '2026-11-27T09:00:00.000Z',
};

describe('ChangeCustomerHandler', () => {
  let dir: string;
  let store: SqliteEventStore;
  let clock: FixedClock;
  let handler: ChangeCustomerHandler;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'change-customer-'));
    store = SqliteEventStore.open(dir);
    clock = new FixedClock(NOW);
    handler = new ChangeCustomerHandler(new EventSourcedRepository(store, clock));
    // Given customer 1, Ada.
    await registerCustomers(
      store,
      clock,
      new CustomerNumberAllocator(store, clock),
      [{ name: ADA.name, email: ADA.email }],
      CONTEXT,
    );
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const change = (customerId: number, patch: Record<string, unknown>, ifMatch?: number[]) =>
    handler.execute(new ChangeCustomerCommand(customerId, patch, CONTEXT, ifMatch));
  const events = (customerId = 1) => store.readStream(customerStreamName(customerId));

  it('appends the change after the stream revision and answers the changed customer with its new revision', async () => {
    clock.time = NOW + 60_000;

    const result = await change(1, { email: 'ada@lovelace.example' });

    expect(result).toEqual({ customer: { ...ADA, email: 'ada@lovelace.example' }, revision: 1 });
    const [, changed, ...more] = await events();
    expect(more).toEqual([]);
    expect(changed).toMatchObject({
      revision: 1,
      type: 'CustomerChanged.v1',
      data: { customerId: 1, changes: { email: 'ada@lovelace.example' } },
      metadata: {
        actor: 'admin-1',
        correlationId: 'c-change',
        auth: { method: 'bearer', tokenId: 't-1' },
        occurredAt: '2026-11-27T09:01:00.000Z',
      },
    });
  });

  it('appends nothing for a patch that changes nothing, and answers the revision as it is', async () => {
    const result = await change(1, { name: 'Ada Lovelace' });

    expect(result).toEqual({ customer: ADA, revision: 0 });
    expect(await events()).toHaveLength(1);
  });

  it('changes the customer when If-Match names its revision', async () => {
    const result = await change(1, { name: 'Ada King' }, [3, 0]);

    expect(result).toEqual({ customer: { ...ADA, name: 'Ada King' }, revision: 1 });
  });

  it('refuses a change when If-Match names other revisions, appending nothing', async () => {
    await change(1, { name: 'Ada King' });

    const refused = change(1, { name: 'Ada Byron' }, [0]);

    await expect(refused).rejects.toThrow(PreconditionFailedError);
    await expect(refused).rejects.toMatchObject({ currentRevision: 1 });
    expect(await events()).toHaveLength(2);
  });

  it('refuses a customer that does not exist', async () => {
    await expect(change(2, { name: 'Grace Hopper' })).rejects.toThrow(NotFoundError);
    expect(await events(2)).toEqual([]);
  });

  it('refuses an invalid patch the same for every customer, existing or not', async () => {
    for (const customerId of [1, 2]) {
      await expect(change(customerId, { email: null })).rejects.toThrow(ValidationError);
      await expect(change(customerId, { id: 3 })).rejects.toMatchObject({
        errors: [{ field: 'id', message: 'is not a field that can be changed' }],
      });
    }
    expect(await events()).toHaveLength(1);
  });
});
