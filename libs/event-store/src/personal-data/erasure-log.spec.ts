import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErasureLog } from './erasure-log';

describe('ErasureLog', () => {
  let dir: string;
  let log: ErasureLog;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'erasure-log-'));
    log = new ErasureLog(join(dir, 'kept', 'erasures.jsonl'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const user = {
    subject: { kind: 'user' as const, id: 'u-1' },
    erasedAt: '2026-01-01T00:00:00.000Z',
    firstEventId: 'e-1',
  };
  const customer = {
    subject: { kind: 'customer' as const, id: '7' },
    erasedAt: '2026-01-02T00:00:00.000Z',
    firstEventId: 'e-2',
  };

  it('reads nothing before the first erasure, then every subject once, the first logged, in order', async () => {
    expect(await log.read()).toEqual({ erasures: [], unreadable: 0 });
    await log.append(user);
    await log.append(customer);
    await log.append({ ...user, erasedAt: '2026-03-01T00:00:00.000Z' });
    expect(await log.read()).toEqual({ erasures: [user, customer], unreadable: 0 });
    expect(statSync(log.file).mode & 0o777).toBe(0o600);
    // Ids and times only: one line per erasure, naming the subject as its stream is named.
    expect(readFileSync(log.file, 'utf8').split('\n')[0]).toBe(
      '{"subject":"user-u-1","kind":"user","id":"u-1","erasedAt":"2026-01-01T00:00:00.000Z","firstEventId":"e-1"}',
    );
  });

  it('counts lines that are no erasure, and still reads the ones after a line cut short by a crash', async () => {
    await log.append(user);
    appendFileSync(log.file, '{"subject":"customer-');
    await log.append(customer);
    appendFileSync(
      log.file,
      [
        '{"subject":"user-x","kind":"admin","id":"x","erasedAt":"2026-01-01T00:00:00Z","firstEventId":"e"}',
        '{"subject":"user-y","kind":"user","id":"z","erasedAt":"2026-01-01T00:00:00Z","firstEventId":"e"}',
        '{"subject":"user-y","kind":"user","id":"y","erasedAt":"yesterday","firstEventId":"e"}',
        '{"subject":"user-y","kind":"user","id":"y","erasedAt":"2026-01-01T00:00:00Z"}',
        'null',
        '',
      ].join('\n'),
    );
    expect(await log.read()).toEqual({ erasures: [user, customer], unreadable: 6 });
  });
});
