import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppendResult, SqliteCheckpointStore, SqliteEventStore } from '@chronicle/event-store';
import { MemoryReadStore } from './memory/memory-read-store';
import { ProjectionProcessor } from './projection-processor';
import { ALL_PROJECTIONS } from './projections/all-projections';
import { Checkpoint, DocumentChange } from './read-store.port';
import { reaches } from './projection-processor.spec-helper';

/** The runner against the real embedded event store and its subscription. */
describe('ProjectionProcessor on the embedded event store', () => {
  let dir: string;
  let events: SqliteEventStore;
  const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'chronicle-runner-'));
    events = SqliteEventStore.open(dir);
  });

  afterEach(async () => {
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function registerCustomer(id: number): Promise<AppendResult> {
    const data = {
      customerId: id,
      name: `Customer ${id}`,
      email: `c${id}@example.com`,
      createdon: '2026-01-01T00:00:00.000Z',
    };
    const metadata = {
      actor: 'system',
      correlationId: 'test',
      causationId: null,
      occurredAt: '2026-01-01T00:00:00.000Z',
    };
    return events.append(
      `customer-${id}`,
      [{ id: randomUUID(), type: 'CustomerRegistered.v1', data, metadata }],
      'no_stream',
    );
  }

  it('replays the history in batches, follows live events and resumes after a restart', async () => {
    await Promise.all(Array.from({ length: 3_000 }, (_, i) => registerCustomer(i + 1)));
    const readStore = new MemoryReadStore();
    const batches: number[] = [];
    const applyBatch = readStore.applyBatch.bind(readStore);
    readStore.applyBatch = (changes: DocumentChange[], checkpoint: Checkpoint) => {
      batches.push(changes.length);
      return applyBatch(changes, checkpoint);
    };
    const parking = SqliteCheckpointStore.open(':memory:');
    const options = { checkpointName: 'read-models', batchSize: 1000, logger: quiet, parking };

    const first = new ProjectionProcessor(events, readStore, ALL_PROJECTIONS, options);
    await first.start();
    expect(batches).toEqual([1000, 1000, 1000]);
    const live = await registerCustomer(3_001);
    expect(await reaches(first, live.position, 2000)).toBe(true);
    await first.stop();

    await registerCustomer(3_002);
    const second = new ProjectionProcessor(events, readStore, ALL_PROJECTIONS, options);
    await second.start();
    await second.stop();

    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(3_002);
    const page = await readStore.listCustomers({ gt: 2_999, offset: 0, limit: 10 });
    expect(page).toEqual({
      items: [3_000, 3_001, 3_002].map((id) => expect.objectContaining({ id, name: `Customer ${id}` })),
      total: 3,
    });
  });
});
