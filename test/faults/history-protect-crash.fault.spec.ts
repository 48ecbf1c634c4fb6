import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteEventStore } from '@chronicle/event-store';
import { jsonLines, runCliProcess, runCliWith } from '../e2e/support/cli-process';
import { newDataDir } from '../e2e/support/test-app';

/** Kills `history protect` with SIGKILL before its commit, or after it before the vacuum. */
const KILL_DURING_PROTECT = join(__dirname, 'support', 'kill-during-history-protect.preload.ts');
const NAME = 'Crashy Plainwombat-Zq';

/**
 * `history protect` cut by a crash: SIGKILL inside its transaction leaves the history as it was
 * (plaintext, the chain as before, append-only); after its commit, as protected; either way a
 * second run completes it, and no byte of the plaintext is left in events.db.
 */
describe.each(['before-commit', 'after-commit'] as const)('history protect killed %s', (point) => {
  const dataDir = newDataDir();
  const eventsDbBytes = () =>
    Buffer.concat(
      readdirSync(dataDir)
        .filter((file) => file.startsWith('events.db'))
        .map((file) => readFileSync(join(dataDir, file))),
    );
  const cli = async (...args: string[]) => {
    const result = await runCliProcess(dataDir, ...args);
    return { code: result.code, json: jsonLines(result.stdout)[0] };
  };

  beforeAll(async () => {
    const store = SqliteEventStore.open(dataDir);
    try {
      for (let i = 0; i < 20; i++) {
        const userId = randomUUID();
        await store.append(
          `user-${userId}`,
          [
            {
              id: randomUUID(),
              type: 'UserRegistered.v1',
              data: {
                userId,
                accountId: null,
                name: `${NAME} ${i}`,
                age: 30 + i,
                createdon: '2020-01-01T00:00:00.000Z',
              },
              metadata: {
                actor: 'system',
                correlationId: 'older',
                causationId: null,
                occurredAt: '2020-01-01T00:00:00.000Z',
              },
            },
          ],
          'no_stream',
        );
      }
    } finally {
      await store.close();
    }
  });

  it('leaves the whole protect or none of it, and a second run completes it', async () => {
    const before = await cli('audit', 'seal');

    process.env.KILL_PROTECT_AT = point;
    let killed;
    try {
      killed = await runCliWith({ dataDir, nodeOptions: ['-r', KILL_DURING_PROTECT] }, 'history', 'protect');
    } finally {
      delete process.env.KILL_PROTECT_AT;
    }
    expect(killed.signal).toBe('SIGKILL');

    const sealFile = join(newDataDir(), 'seal.json');
    writeFileSync(sealFile, JSON.stringify(before.json));
    const verified = await cli('audit', 'verify', '--seal', sealFile);
    expect(verified.json).toMatchObject({ ok: true, broken: null, seal: { valid: true } });
    if (point === 'before-commit') {
      // As it was: the sealed history itself, not one re-chained by a protect; still plaintext.
      expect(verified.json.seal.protection).toBeUndefined();
      expect(eventsDbBytes().includes(Buffer.from(NAME))).toBe(true);
    } else {
      expect(verified.json.seal.protection).toEqual(expect.any(String));
    }

    const completed = await cli('history', 'protect');
    expect(completed.code).toBe(0);
    expect(completed.json.events).toBe(point === 'before-commit' ? 20 : 0);
    expect(eventsDbBytes().includes(Buffer.from(NAME))).toBe(false);
    expect((await cli('audit', 'verify')).json).toMatchObject({ ok: true, broken: null });
    const records = jsonLines(
      (await runCliProcess(dataDir, 'audit', '--type', 'HistoryProtected.v1')).stdout,
    );
    expect(records.filter((record) => record.type === 'HistoryProtected.v1')).toHaveLength(1);
  });
});
