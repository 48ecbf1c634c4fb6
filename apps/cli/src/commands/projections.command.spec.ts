import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENTS_FILE, position, SqliteCheckpointStore, SqliteEventStore } from '@chronicle/event-store';
import { runCli } from '../run-cli';

describe('projections status and parked (in process)', () => {
  let dir: string;
  let printed: string[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cli-parked-'));
    await SqliteEventStore.open(dir).close();
    const checkpoints = SqliteCheckpointStore.open(join(dir, EVENTS_FILE));
    await checkpoints.park({
      processor: 'saga:password',
      eventId: 'e-1',
      stream: 'resetrequest-ab',
      revision: 0,
      type: 'PasswordResetRequested.v1',
      position: position(1),
      reason: 'The mail server refused the message: 550',
      attempts: 1,
      parkedAt: '2026-11-24T00:00:00.000Z',
    });
    await checkpoints.close();
    printed = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (...argv: string[]) => runCli(argv, { DATA_DIR: dir, LOG_LEVEL: 'silent' });

  it('lists the parked messages with their reason, and each saga with its lag', async () => {
    expect(await run('projections', 'status')).toBe(0);
    const status = JSON.parse(printed.join('')) as Record<string, unknown>;
    expect(status).toEqual({
      head: null,
      // In-memory read models live in the servers.
      projections: [],
      sagas: [{ name: 'saga:password', checkpoint: null, lag: 0, lagExact: true, lagSeconds: 0 }],
      parked: [
        {
          processor: 'saga:password',
          eventId: 'e-1',
          stream: 'resetrequest-ab',
          type: 'PasswordResetRequested.v1',
          position: '1',
          reason: 'The mail server refused the message: 550',
          attempts: 1,
          parkedAt: '2026-11-24T00:00:00.000Z',
        },
      ],
    });
  });

  it('drops a parked message once, and says when there is none', async () => {
    expect(await run('projections', 'parked', 'drop', 'saga:password', 'e-1')).toBe(0);
    expect(await run('projections', 'parked', 'drop', 'saga:password', 'e-1')).toBe(1);
    expect(printed.map((line) => JSON.parse(line) as unknown)).toEqual([
      { dropped: true },
      { dropped: false },
    ]);
  });

  it('refuses to retry a message that is not parked', async () => {
    expect(await run('projections', 'parked', 'retry', 'saga:password', 'e-2')).toBe(1);
  });
});
