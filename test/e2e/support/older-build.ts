import { randomUUID } from 'node:crypto';
import { NewEvent } from '@chronicle/event-store';
import { rawStore } from './backend';
import { runCliJson } from './cli-process';
import { newDataDir } from './test-app';

const metadata = {
  actor: 'system',
  correlationId: 'older-build',
  causationId: null,
  occurredAt: '2020-01-01T00:00:00.000Z',
};

const olderEvent = (type: string, data: NewEvent['data']): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata,
});

/**
 * Writes to the data directory's store what a build from before personal values were encrypted
 * wrote (plaintext values, no personalData marker): a user registered as `name` then renamed
 * `renamed`, another user `erasedName`, and a customer when given.
 */
export async function writeOlderBuildHistory(
  dataDir: string,
  users: { userId: string; erasedId: string; name: string; renamed: string; erasedName: string },
  customer?: { customerId: number; name: string; email: string },
): Promise<void> {
  const { userId, erasedId } = users;
  const registered = (id: string, name: string) =>
    olderEvent('UserRegistered.v1', {
      userId: id,
      accountId: null,
      name,
      age: 41,
      createdon: '2020-01-01T00:00:00.000Z',
    });
  const raw = await rawStore(dataDir);
  try {
    await raw.append(`user-${userId}`, [registered(userId, users.name)], 'no_stream');
    await raw.append(`user-${erasedId}`, [registered(erasedId, users.erasedName)], 'no_stream');
    const changes = { name: users.renamed };
    const patch = olderEvent('UserPatched.v1', { userId, changes, modifiedon: '2020-01-02T00:00:00.000Z' });
    await raw.append(`user-${userId}`, [patch], 0);
    if (customer !== undefined) {
      const data = { ...customer, createdon: '2020-01-03T00:00:00.000Z' };
      await raw.append(
        `customer-${customer.customerId}`,
        [olderEvent('CustomerRegistered.v1', data)],
        'no_stream',
      );
    }
  } finally {
    await raw.close();
  }
}

/**
 * What `history protect` is tried on: a data directory, another for what a test keeps aside (seals,
 * receipts), and the ids of the two users. `setUp` (in a beforeAll) writes the older build's
 * history (`texts` its users' names, and the customer when given), runs `beforeErasure`, then
 * erases the second user with this build, through the CLI.
 */
export function historyToProtect(
  texts: { name: string; renamed: string; erasedName: string },
  customer?: { customerId: number; name: string; email: string },
) {
  const dataDir = newDataDir();
  const userId = randomUUID();
  const erasedId = randomUUID();
  return {
    dataDir,
    keptDir: newDataDir(),
    userId,
    erasedId,
    async setUp(beforeErasure: () => Promise<void> = () => Promise.resolve()): Promise<void> {
      await writeOlderBuildHistory(dataDir, { userId, erasedId, ...texts }, customer);
      await beforeErasure();
      expect((await runCliJson({ dataDir }, 'erase', '--user', erasedId)).code).toBe(0);
    },
  };
}
