import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Argon2PasswordHasher } from '@chronicle/auth';
import { comparePositions, EventStore, Position, RecordedEvent } from '@chronicle/event-store';
import {
  LegacyAccount,
  plainAddressHash,
  writeLegacyAccount,
  writeLegacyResetRequest,
} from '../../libs/application/src/accounts/legacy-reservations.spec-helper';
import { rawStore } from './support/backend';
import { eventually } from './support/eventually';
import { basic, newDataDir, startTestApp, TestAccount, TestApp } from './support/test-app';

/**
 * A store written before reservation streams were keyed (plain SHA-256 of the address in
 * `email-` and `resetrequest-` names), opened by this build: what was reserved stays reserved,
 * what was requested is still mailed, and nothing written from then on names an address by a hash
 * anyone could compute.
 */
describe('a store from before keyed address streams', () => {
  const password = 'legacy owner passphrase';
  let subject: TestApp;
  let admin: TestAccount;
  let ada: LegacyAccount;
  /** The last event the older build wrote. */
  let upgradedAt: Position;

  const withRawStore = async <T>(work: (store: EventStore) => Promise<T>): Promise<T> => {
    const store = await rawStore(subject.dataDir);
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  };
  const mailsTo = (address: string): string[] => {
    const outbox = join(subject.dataDir, 'outbox');
    if (!existsSync(outbox)) return [];
    return (
      readdirSync(outbox)
        .filter((name) => name.endsWith('.eml'))
        .map((name) => readFileSync(join(outbox, name), 'utf8'))
        // The mailer writes the domain in lower case.
        .filter((mail) => mail.toLowerCase().includes(`to: ${address}`))
    );
  };
  const requestReset = (email: string) =>
    fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
  const invite = (email: string) =>
    fetch(`${subject.url}/api/v1/accounts`, {
      method: 'POST',
      headers: { authorization: basic(admin), 'content-type': 'application/json' },
      body: JSON.stringify({ email, name: 'Newcomer', age: 30 }),
    });

  beforeAll(async () => {
    const dataDir = newDataDir();
    const legacy = await rawStore(dataDir);
    try {
      ada = await writeLegacyAccount(legacy, 'Ada@Example.com', {
        passwordHash: await new Argon2PasswordHasher().hash(password),
      });
      // A reset request the older build stored, whose e-mail was never sent (it stopped first).
      await writeLegacyResetRequest(legacy, 'ada@example.com');
      upgradedAt = (await legacy.headPosition())!;
    } finally {
      await legacy.close();
    }
    subject = await startTestApp({ dataDir });
    admin = await subject.createAccount({ admin: true });
  });
  afterAll(() => subject.destroy());

  it('refuses an address reserved before the upgrade as taken (409), however it is spelt', async () => {
    for (const spelling of ['ada@example.com', ' ADA@example.COM ']) {
      const response = await invite(spelling);
      expect(response.status).toBe(409);
      expect(((await response.json()) as { type: string }).type).toBe('email-taken');
    }
  });

  it("lets the address's owner log in as before", async () => {
    const response = await fetch(`${subject.url}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { authorization: basic({ email: 'ada@example.com', password }) },
    });
    expect(response.status).toBe(201);
  });

  it('mails the reset request stored before the upgrade, and a new one, to the account that had the address', async () => {
    await eventually('the stored request mailed', () => mailsTo('ada@example.com').length === 1);
    expect((await requestReset('ada@example.com')).status).toBe(202);
    await eventually('the new request mailed', () => mailsTo('ada@example.com').length === 2);
    for (const mail of mailsTo('ada@example.com')) expect(mail).toMatch(/reset-password\?token=/);
  });

  it('names no address by its plain SHA-256 in any stream or event written since', async () => {
    const newcomer = 'newcomer@example.com';
    expect((await invite(newcomer)).status).toBe(201);
    expect((await requestReset(newcomer)).status).toBe(202);
    expect((await requestReset('nobody@example.com')).status).toBe(202);
    expect((await requestReset('ada@example.com')).status).toBe(202);
    await subject.settle();
    const plain = [newcomer, 'nobody@example.com', ada.email, admin.email].map(plainAddressHash);

    const { before, since } = await withRawStore(async (store) => {
      const events: RecordedEvent[] = [];
      for await (const event of store.readAll()) events.push(event);
      return {
        before: events.filter((event) => comparePositions(event.position, upgradedAt) <= 0),
        since: events.filter((event) => comparePositions(event.position, upgradedAt) > 0),
      };
    });
    // As stored, stream names and every field: a position is a number of the store, not text.
    const text = (event: RecordedEvent) => JSON.stringify({ ...event, position: null });
    expect(since.map((event) => event.type)).toEqual(
      expect.arrayContaining(['EmailReserved.v1', 'PasswordResetRequested.v2', 'ReservationsKeyed.v1']),
    );
    expect(since.filter((event) => plain.some((hash) => text(event).includes(hash)))).toEqual([]);
    // The older build's own events keep theirs: the history is never rewritten.
    expect(before.filter((event) => text(event).includes(plainAddressHash(ada.email)))).toHaveLength(2);
  });
});
