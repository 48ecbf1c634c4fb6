import Database from 'better-sqlite3';
import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { protectionRecord } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { EVENTS_FILE, SqliteCheckpointStore, SqliteEventStore } from '@chronicle/event-store';
import { HISTORY_CHAIN_PROCESSOR, HistoryChainWatch } from './history-chain-watch.service';

const event = (name: string) => ({
  id: randomUUID(),
  type: 'CustomerRegistered.v1',
  data: { name },
  metadata: {
    actor: 'system',
    correlationId: 'c',
    causationId: null,
    occurredAt: '2026-01-01T00:00:00.000Z',
  },
});

describe('HistoryChainWatch', () => {
  let dataDir: string;
  let errors: string[];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'chain-watch-'));
    errors = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      errors.push(String(message));
    });
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Appends `count` events, one stream each, then runs a server start's verification on the store. */
  async function start(count = 0) {
    const store = SqliteEventStore.open(dataDir);
    const checkpoints = SqliteCheckpointStore.open(join(dataDir, EVENTS_FILE));
    for (let i = 0; i < count; i++)
      await store.append(`customer-${randomUUID()}`, [event(`c${i}`)], 'no_stream');
    const watch = new HistoryChainWatch(store, checkpoints);
    watch.onApplicationBootstrap();
    await watch.settled();
    await watch.onApplicationShutdown();
    const kept = (await checkpoints.loadState(HISTORY_CHAIN_PROCESSOR)).get('verified-head') as {
      position: string;
    };
    await store.close();
    await checkpoints.close();
    return { status: watch.status(), kept };
  }

  /** A server that verified 3 events at its start, running while `body` runs. */
  async function whileRunning(
    body: (
      store: SqliteEventStore,
      checkpoints: SqliteCheckpointStore,
      watch: HistoryChainWatch,
    ) => Promise<void>,
  ): Promise<void> {
    await start(3);
    const store = SqliteEventStore.open(dataDir);
    const checkpoints = SqliteCheckpointStore.open(join(dataDir, EVENTS_FILE));
    const watch = new HistoryChainWatch(store, checkpoints);
    try {
      watch.onApplicationBootstrap();
      await watch.settled();
      await body(store, checkpoints, watch);
    } finally {
      await watch.onApplicationShutdown();
      await store.close();
      await checkpoints.close();
    }
  }

  /** An edit of events.db by someone who can write it: the triggers dropped first. */
  function tamper(sql: string): void {
    const db = new Database(join(dataDir, EVENTS_FILE));
    try {
      db.exec('DROP TRIGGER IF EXISTS events_no_update; DROP TRIGGER IF EXISTS events_no_delete;');
      db.exec(sql);
    } finally {
      db.close();
    }
  }

  it('verifies the whole chain on the first start and keeps its head; a restart goes on from there', async () => {
    const first = await start(5);
    const second = await start(3);

    expect(first).toEqual({
      status: { state: 'verified', firstBroken: null, verifyingFrom: null },
      kept: expect.objectContaining({ position: '5' }),
    });
    expect(second).toEqual({
      status: { state: 'verified', firstBroken: null, verifyingFrom: '5' },
      kept: expect.objectContaining({ position: '8' }),
    });
    expect(errors).toEqual([]);
  });

  it('names an event of the tail edited with its hash kept, and logs it at once', async () => {
    await start(4);
    const store = SqliteEventStore.open(dataDir);
    await store.append('customer-tail', [event('tail'), event('tail 2')], 'no_stream');
    await store.close();
    tamper(`UPDATE events SET data = '{"name":"edited"}' WHERE position = 5`);

    const { status } = await start();

    expect(status).toMatchObject({
      state: 'broken',
      firstBroken: { position: '5', stream: 'customer-tail' },
    });
    expect(errors).toEqual([
      expect.stringContaining('hash chain breaks at position 5 (customer-tail, revision 0)'),
    ]);
  });

  it('names an event below the kept head edited with its hash kept: the whole chain is walked too', async () => {
    await start(6);
    tamper(`UPDATE events SET data = '{"name":"edited"}' WHERE position = 3`);

    const { status, kept } = await start();

    expect(status).toMatchObject({ state: 'broken', firstBroken: { position: '3' } });
    // The broken history is not kept as verified.
    expect(kept).toMatchObject({ position: '6' });
  });

  it('names the kept head when the history was rewritten with its hashes made anew, or cut short', async () => {
    await start(3);
    tamper(`UPDATE events SET hash = '${'ab'.repeat(32)}' WHERE position = 3`);
    const rewritten = await start();
    tamper('DELETE FROM events WHERE position = 3');
    const cut = await start();

    expect(rewritten.status.firstBroken).toMatchObject({
      position: '3',
      reason: expect.stringContaining('rewritten'),
    });
    expect(cut.status.firstBroken).toMatchObject({
      position: '3',
      reason: expect.stringContaining('no longer stored'),
    });
  });

  it('checks, while it runs, the events written since it verified, and keeps the new head', () =>
    whileRunning(async (store, checkpoints, watch) => {
      await store.append('customer-later', [event('later'), event('later 2')], 'no_stream');
      await watch.checkTail();
      const kept = (await checkpoints.loadState(HISTORY_CHAIN_PROCESSOR)).get('verified-head');
      await store.append('customer-edited', [event('edited')], 'no_stream');
      tamper(`UPDATE events SET data = '{"name":"changed"}' WHERE position = 6`);
      await watch.checkTail();

      expect(kept).toMatchObject({ position: '5', stream: 'customer-later', revision: 1 });
      expect(watch.status()).toMatchObject({ state: 'broken', firstBroken: { position: '6' } });
      expect(errors).toEqual([expect.stringContaining('breaks at position 6')]);
    }));

  it("checks the tail from the chain's links, never reading (so never decrypting) the events themselves", () =>
    whileRunning(async (store, checkpoints, watch) => {
      await store.append('customer-later', [event('later')], 'no_stream');
      const readAll = jest.spyOn(store, 'readAll');
      const readStream = jest.spyOn(store, 'readStream');
      await watch.checkTail();

      expect(readAll).not.toHaveBeenCalled();
      expect(readStream).not.toHaveBeenCalled();
      expect((await checkpoints.loadState(HISTORY_CHAIN_PROCESSOR)).get('verified-head')).toMatchObject({
        position: '4',
        stream: 'customer-later',
      });
    }));

  it('keeps the first break of several, whatever order they are reported in', async () => {
    const { status } = await start(2);
    const store = SqliteEventStore.open(dataDir);
    const checkpoints = SqliteCheckpointStore.open(join(dataDir, EVENTS_FILE));
    const watch = new HistoryChainWatch(store, checkpoints);
    try {
      watch.report({ position: '9', stream: 's', revision: 0, reason: 'r' });
      watch.report({ position: '4', stream: 's', revision: 1, reason: 'r' });
      watch.report({ position: '7', stream: 's', revision: 2, reason: 'r' });

      expect(status.state).toBe('verified');
      expect(watch.status()).toMatchObject({ state: 'broken', firstBroken: { position: '4' } });
      expect(errors).toHaveLength(2);
    } finally {
      await store.close();
      await checkpoints.close();
    }
  });

  describe('after history protect re-chained the history over the kept head', () => {
    const key = randomBytes(32);

    /** The kept head's event rewritten as `history protect` would, recorded and signed with `signedWith`. */
    async function protect(signedWith: Buffer): Promise<void> {
      const store = SqliteEventStore.open(dataDir);
      try {
        await store.rewriteHistory({
          rewrite: (events) =>
            Promise.resolve(
              events.map((stored) =>
                stored.data.name === 'c1'
                  ? { data: { name: 'p1.protected' }, metadata: stored.metadata }
                  : null,
              ),
            ),
          record: (summary) => ({
            stream: 'historyprotection',
            event: { ...event('record'), ...protectionRecord(summary, signedWith) },
          }),
        });
      } finally {
        await store.close();
      }
    }

    async function restart() {
      const store = SqliteEventStore.open(dataDir);
      const checkpoints = SqliteCheckpointStore.open(join(dataDir, EVENTS_FILE));
      const config = { auditSealKey: key, dataDir } as ChronicleConfig;
      const watch = new HistoryChainWatch(store, checkpoints, config);
      try {
        watch.onApplicationBootstrap();
        await watch.settled();
        return watch.status();
      } finally {
        await watch.onApplicationShutdown();
        await store.close();
        await checkpoints.close();
      }
    }

    it('accepts the re-chained history when the record is signed with the seal key', async () => {
      await start(3);
      await protect(key);

      expect(await restart()).toMatchObject({ state: 'verified', firstBroken: null });
      expect(errors).toEqual([]);
    });

    it('reports the rewrite when the record is not signed with the seal key', async () => {
      await start(3);
      await protect(randomBytes(32));

      expect(await restart()).toMatchObject({
        state: 'broken',
        firstBroken: { position: '3', reason: expect.stringContaining('the history was rewritten') },
      });
    });
  });
});
