import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '@chronicle/config';
import { openEventStore } from '@chronicle/event-store';
import { customersJsonBytes } from './memory';

describe('the memory benchmark’s ceiling', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is the customers as served, in plaintext, though the store holds their values encrypted', async () => {
    const customer = {
      customerId: 7,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      createdon: '2026-11-27T00:00:00.000Z',
    };
    const metadata = {
      actor: 'system',
      correlationId: randomUUID(),
      causationId: null,
      occurredAt: customer.createdon,
    };
    const store = await openEventStore(parseConfig({ DATA_DIR: dir }));
    try {
      await store.append(
        'customer-7',
        [{ id: randomUUID(), type: 'CustomerRegistered.v1', data: customer, metadata }],
        'no_stream',
      );
      await store.append(
        'customer-8',
        [
          {
            id: randomUUID(),
            metadata,
            type: 'CustomerChanged.v1',
            data: { customerId: 8, changes: {} },
          },
        ],
        'any',
      );
    } finally {
      await store.close();
    }
    const served = { id: 7, name: 'Ada Lovelace', email: 'ada@example.com', createdon: customer.createdon };
    await expect(customersJsonBytes(dir)).resolves.toBe(Buffer.byteLength(JSON.stringify(served)));
  });
});
