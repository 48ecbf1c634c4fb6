import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Argon2PasswordHasher } from '@chronicle/auth';
import { RecordedEvent, SqliteEventStore } from '@chronicle/event-store';
import {
  LegacyAccount,
  plainAddressHash,
  writeLegacyAccount,
} from '../../libs/application/src/accounts/legacy-reservations.spec-helper';
import { basic, newDataDir } from '../e2e/support/test-app';
import { kill9, startApi, stopRunning } from './support/api-process';

const ACCOUNTS = 300;
/** Each reservation's write made slow in the first process, so the kill lands in the middle. */
const SLOW_RESERVATIONS = join(__dirname, 'support', 'slow-reservations.preload.ts');

/**
 * Keying the reservation streams of a store written before they were keyed, with the API as a
 * child process on the embedded default, killed with SIGKILL half-way and started again.
 */
describe('keying reservation streams under faults', () => {
  let dataDir: string;
  let accounts: LegacyAccount[];
  const owner = { email: 'owner@example.com', password: 'legacy owner passphrase' };

  /** The store's events as stored, read by this process beside the API's. */
  const stored = async (types: string[]): Promise<RecordedEvent[]> => {
    const store = SqliteEventStore.open(dataDir);
    try {
      const events: RecordedEvent[] = [];
      for await (const event of store.readAll({ eventTypes: types })) events.push(event);
      return events;
    } finally {
      await store.close();
    }
  };
  const legacyStreams = () => new Set(accounts.map((account) => `email-${plainAddressHash(account.email)}`));
  const keyedReservations = async () =>
    (await stored(['EmailReserved.v1'])).filter((event) => !legacyStreams().has(event.stream));

  beforeEach(async () => {
    dataDir = newDataDir();
    const store = SqliteEventStore.open(dataDir);
    try {
      accounts = [
        await writeLegacyAccount(store, owner.email, {
          passwordHash: await new Argon2PasswordHasher().hash(owner.password),
          roles: ['admin'],
        }),
      ];
      for (let i = 1; i < ACCOUNTS; i++)
        accounts.push(await writeLegacyAccount(store, `old${i}@example.com`));
    } finally {
      await store.close();
    }
  }, 120_000);
  afterEach(async () => {
    await stopRunning();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const login = (url: string) =>
    fetch(`${url}/api/v1/account/tokens`, { method: 'POST', headers: { authorization: basic(owner) } });

  it('killed half-way, finishes after a restart: every old address reserved once under its keyed name', async () => {
    const first = await startApi(dataDir, { SLOW_RESERVATIONS_MS: '20' }, { preloads: [SLOW_RESERVATIONS] });
    // The first request that names an address starts the keying; it waits for it.
    void login(first.url).catch(() => undefined);
    let written = 0;
    const deadline = Date.now() + 60_000;
    while ((written = (await keyedReservations()).length) < 20) {
      if (Date.now() > deadline) throw new Error('the keying did not start within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await kill9(first);
    const cut = await keyedReservations();
    expect(cut.length).toBeGreaterThanOrEqual(written);
    expect(cut.length).toBeLessThan(ACCOUNTS);
    expect(await stored(['ReservationsKeyed.v1'])).toEqual([]);

    const second = await startApi(dataDir);
    expect((await login(second.url)).status).toBe(201);

    const reservations = await keyedReservations();
    const byStream = new Map<string, string[]>();
    for (const event of reservations) {
      byStream.set(event.stream, [
        ...(byStream.get(event.stream) ?? []),
        (event.data as { accountId: string }).accountId,
      ]);
    }
    expect(byStream.size).toBe(ACCOUNTS);
    expect([...byStream.values()].every((holders) => holders.length === 1)).toBe(true);
    expect(new Set([...byStream.values()].flat())).toEqual(
      new Set(accounts.map((account) => account.accountId)),
    );
    expect((await stored(['ReservationsKeyed.v1'])).map((event) => event.data)).toEqual([
      expect.objectContaining({ accounts: ACCOUNTS, written: ACCOUNTS - cut.length, conflicts: 0 }),
    ]);
    // And an address reserved before the upgrade is still taken.
    const invited = await fetch(`${second.url}/api/v1/accounts`, {
      method: 'POST',
      headers: { authorization: basic(owner), 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'old7@example.com', name: 'Someone Else', age: 30 }),
    });
    expect(invited.status).toBe(409);
  }, 120_000);
});
