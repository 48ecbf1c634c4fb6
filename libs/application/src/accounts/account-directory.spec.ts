import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import {
  AccountOpened,
  accountStreamName,
  addressHasher,
  EVENT_UPCASTERS,
  eventSchemaOf,
  RESERVATION_KEYS_STREAM,
} from '@chronicle/domain';
import {
  DataKeyRing,
  EventStore,
  PersonalDataEventStore,
  RecordedEvent,
  SqliteDataKeyStore,
  SqliteEventStore,
  UpcasterRegistry,
  UpcastingEventStore,
  WrongExpectedRevisionError,
} from '@chronicle/event-store';
import { EmailTakenError } from '../shared/application-errors';
import { FixedClock } from '../shared/test-doubles.spec-helper';
import { EventSourcedRepository, toNewEvent } from '../shared/event-sourced-repository';
import { AccountDirectory } from './account-directory';
import { plainAddressHash, writeLegacyAccount } from './legacy-reservations.spec-helper';

const SECRET = Buffer.alloc(32, 7);
const OTHER_SECRET = Buffer.alloc(32, 9);
const context = {
  actor: 'system',
  correlationId: 'spec',
  auth: { method: 'system' as const, tokenId: null },
};

describe('AccountDirectory', () => {
  let dir: string;
  let raw: SqliteEventStore;
  let store: EventStore;
  const clock = new FixedClock(Date.parse('2026-11-27T02:00:00.000Z'));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'directory-'));
    raw = SqliteEventStore.open(dir);
    store = new UpcastingEventStore(raw, new UpcasterRegistry(EVENT_UPCASTERS));
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await raw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A directory as one process has it: its own memory, the server secret it was started with. */
  const directoryWith = (secret = SECRET) =>
    new AccountDirectory(store, new EventSourcedRepository(store, clock), clock, {
      tokenSecret: secret,
    } as ChronicleConfig);

  const everything = async (): Promise<RecordedEvent[]> => {
    const events: RecordedEvent[] = [];
    for await (const event of raw.readAll()) events.push(event);
    return events;
  };
  const keyedStream = (email: string, secret = SECRET) =>
    `email-${addressHasher(secret, 'address-streams')(email)}`;
  const keyings = async () => (await store.readStream(RESERVATION_KEYS_STREAM)).map((event) => event.data);

  /** Opens an account the way the service does now: the reservation, then the account. */
  const openAccount = async (directory: AccountDirectory, email: string, accountId: string) => {
    await directory.reserveEmail(email, accountId, context);
    const opened: AccountOpened = {
      type: 'AccountOpened.v1',
      data: { accountId, email, userId: `u-${accountId}`, roles: ['user'], passwordHash: 'h', openedAt: 'x' },
    };
    await store.append(accountStreamName(accountId), [toNewEvent(opened, context, clock.now())], 'no_stream');
  };

  describe('names reservation streams', () => {
    it('by the keyed hash of the normalised address, never its plain SHA-256', async () => {
      const directory = directoryWith();
      expect(await directory.addressKey(' Ada@Example.COM ')).toBe(
        await directory.addressKey('ada@example.com'),
      );
      expect(await directory.addressKey('ada@example.com')).toMatch(/^[0-9a-f]{64}$/);
      expect(await directory.addressKey('ada@example.com')).not.toBe(plainAddressHash('ada@example.com'));
      expect(await directory.addressKey('bob@example.com')).not.toBe(
        await directory.addressKey('ada@example.com'),
      );
      expect(await directoryWith(OTHER_SECRET).addressKey('ada@example.com')).not.toBe(
        await directory.addressKey('ada@example.com'),
      );
    });

    it('and reserves an address in the keyed stream only', async () => {
      await openAccount(directoryWith(), 'ada@example.com', 'a-1');
      const streams = (await everything()).map((event) => event.stream);
      expect(streams).toContain(keyedStream('ada@example.com'));
      expect(streams.join(' ')).not.toContain(plainAddressHash('ada@example.com'));
    });
  });

  describe('given a store written before reservation streams were keyed', () => {
    it('when first used, keeps every address taken and every account found, and records the keying once', async () => {
      const ada = await writeLegacyAccount(store, 'ada@example.com');
      const bob = await writeLegacyAccount(store, 'bob@example.com');
      const directory = directoryWith();

      await expect(directory.reserveEmail('ADA@example.com', 'a-new', context)).rejects.toBeInstanceOf(
        EmailTakenError,
      );
      expect((await directory.findByEmail('bob@example.com'))?.id).toBe(bob.accountId);
      expect((await directory.findByEmail('ada@example.com'))?.id).toBe(ada.accountId);
      expect(await keyings()).toEqual([
        { keyId: addressHasher(SECRET, 'address-streams').keyId, accounts: 2, written: 2, conflicts: 0 },
      ]);
      const head = await store.headPosition();
      // Another process, started later, finds it done: nothing more is written.
      await directoryWith().reservationsKeyed();
      expect(await store.headPosition()).toEqual(head);
    });

    it('when an old reservation never got its account, leaves the address free', async () => {
      await writeLegacyAccount(store, 'lost@example.com', { opened: false });
      const directory = directoryWith();
      await openAccount(directory, 'lost@example.com', 'a-2');
      expect((await directory.findByEmail('lost@example.com'))?.id).toBe('a-2');
    });

    it('when a keying was cut short, the next run writes the rest and nothing twice', async () => {
      const accounts = await Promise.all(
        ['a', 'b', 'c'].map((name) => writeLegacyAccount(store, `${name}@example.com`)),
      );
      // What a run killed after its first reservation left: one keyed stream, no record of the keying.
      await store.append(
        keyedStream('a@example.com'),
        [
          toNewEvent(
            { type: 'EmailReserved.v1', data: { accountId: accounts[0].accountId } },
            context,
            clock.now(),
          ),
        ],
        'no_stream',
      );

      await directoryWith().reservationsKeyed();

      for (const account of accounts) {
        const reservations = await store.readStream(keyedStream(account.email));
        expect(reservations.map((event) => event.data)).toEqual([{ accountId: account.accountId }]);
      }
      expect(await keyings()).toEqual([expect.objectContaining({ accounts: 3, written: 2 })]);
    });

    it('when several processes key at once, each address gets one reservation', async () => {
      const accounts = await Promise.all(
        ['a', 'b', 'c', 'd'].map((name) => writeLegacyAccount(store, `${name}@example.com`)),
      );
      await Promise.all([1, 2, 3].map(() => directoryWith().reservationsKeyed()));
      for (const account of accounts) {
        expect(await store.readStream(keyedStream(account.email))).toHaveLength(1);
      }
      expect((await keyings()).length).toBeGreaterThanOrEqual(1);
    });
  });

  describe('given a store whose reservations were keyed from the start', () => {
    it('when started again, writes nothing', async () => {
      await openAccount(directoryWith(), 'ada@example.com', 'a-1');
      const before = (await everything()).length;
      const again = directoryWith();
      expect((await again.findByEmail('ada@example.com'))?.id).toBe('a-1');
      expect(await everything()).toHaveLength(before);
      expect(await keyings()).toEqual([]);
    });

    it('when started again on a long log, reads it no further than its first reservation', async () => {
      // As the service composes its store: the personal data layer gathers events in batches.
      const keyStore = new SqliteDataKeyStore(dir, SECRET);
      const encrypting = new UpcastingEventStore(
        new PersonalDataEventStore(raw, new DataKeyRing(keyStore), (type) => eventSchemaOf(type)?.personal),
        new UpcasterRegistry(EVENT_UPCASTERS),
      );
      const directory = () =>
        new AccountDirectory(encrypting, new EventSourcedRepository(encrypting, clock), clock, {
          tokenSecret: SECRET,
        } as ChronicleConfig);
      await openAccount(directory(), 'ada@example.com', 'a-1');
      // Reservations of accounts that were never opened: more than one batch of them.
      for (let i = 0; i < 600; i++)
        await directory().reserveEmail(`gone-${i}@example.com`, `gone-${i}`, context);
      const read = jest.spyOn(raw, 'readAll');
      let handedOver = 0;
      const inner = SqliteEventStore.prototype.readAll;
      read.mockImplementation(async function* (this: SqliteEventStore, options) {
        for await (const event of inner.call(this, options)) {
          handedOver += 1;
          yield event;
        }
      });

      expect((await directory().findByEmail('ada@example.com'))?.id).toBe('a-1');
      expect(handedOver).toBeLessThanOrEqual(1);
      await keyStore.close();
    });

    it('when the server secret changes, keys every reservation under the new one, and back again', async () => {
      await openAccount(directoryWith(), 'ada@example.com', 'a-1');
      const rotated = directoryWith(OTHER_SECRET);
      await expect(rotated.reserveEmail('ada@example.com', 'a-2', context)).rejects.toBeInstanceOf(
        EmailTakenError,
      );
      expect((await rotated.findByEmail('ada@example.com'))?.id).toBe('a-1');
      // Back to the first secret: its streams are there already, the keying is recorded again.
      expect((await directoryWith().findByEmail('ada@example.com'))?.id).toBe('a-1');
      expect(await keyings()).toEqual([
        {
          keyId: addressHasher(OTHER_SECRET, 'address-streams').keyId,
          accounts: 1,
          written: 1,
          conflicts: 0,
        },
        { keyId: addressHasher(SECRET, 'address-streams').keyId, accounts: 1, written: 0, conflicts: 0 },
      ]);
    });
  });

  describe('given a keying that fails', () => {
    it('when asked again, keys again rather than keep the failure', async () => {
      const ada = await writeLegacyAccount(store, 'ada@example.com');
      const directory = directoryWith();
      const reads = jest.spyOn(store, 'readStream').mockRejectedValueOnce(new Error('store unavailable'));
      try {
        await expect(directory.findByEmail('ada@example.com')).rejects.toThrow('store unavailable');
        expect((await directory.findByEmail('ada@example.com'))?.id).toBe(ada.accountId);
        expect(await keyings()).toHaveLength(1);
      } finally {
        reads.mockRestore();
      }
    });

    it('when the record of the keying cannot be written, fails, and the next call finishes it', async () => {
      await writeLegacyAccount(store, 'ada@example.com');
      const directory = directoryWith();
      const appends = jest.spyOn(store, 'append');
      appends.mockImplementation((stream, events, expected) =>
        stream === RESERVATION_KEYS_STREAM
          ? Promise.reject(new Error('disk full'))
          : SqliteEventStore.prototype.append.call(raw, stream, events, expected),
      );
      try {
        await expect(directory.reservationsKeyed()).rejects.toThrow('disk full');
      } finally {
        appends.mockRestore();
      }
      await directory.reservationsKeyed();
      expect(await keyings()).toEqual([expect.objectContaining({ accounts: 1, written: 0 })]);
    });
  });

  describe('when reserving an address', () => {
    it('answers that it is taken when another writer reserved it first', async () => {
      const directory = directoryWith();
      await directory.reservationsKeyed();
      jest
        .spyOn(store, 'append')
        .mockRejectedValueOnce(
          new WrongExpectedRevisionError(keyedStream('ada@example.com'), 'no_stream', 0),
        );
      await expect(directory.reserveEmail('ada@example.com', 'a-1', context)).rejects.toBeInstanceOf(
        EmailTakenError,
      );
    });

    it("passes on the store's own failure", async () => {
      const directory = directoryWith();
      await directory.reservationsKeyed();
      jest.spyOn(store, 'append').mockRejectedValueOnce(new Error('disk full'));
      await expect(directory.reserveEmail('ada@example.com', 'a-1', context)).rejects.toThrow('disk full');
    });
  });

  describe('when keying', () => {
    /** Appends to reservation streams fail as if another writer came first, `times` times. */
    const claimsConflict = (times: number) => {
      const append = store.append.bind(store);
      let left = times;
      jest.spyOn(store, 'append').mockImplementation((stream, events, expected) => {
        if (stream.startsWith('email-') && left > 0) {
          left -= 1;
          return Promise.reject(new WrongExpectedRevisionError(stream, expected, 0));
        }
        return append(stream, events, expected);
      });
    };

    it('claims an address again after a conflict, up to five times', async () => {
      const ada = await writeLegacyAccount(store, 'ada@example.com');
      claimsConflict(4);
      const directory = directoryWith();
      expect((await directory.findByEmail('ada@example.com'))?.id).toBe(ada.accountId);
      expect(await keyings()).toEqual([expect.objectContaining({ accounts: 1, written: 1 })]);
    });

    it('fails after the fifth conflict on one address', async () => {
      await writeLegacyAccount(store, 'ada@example.com');
      claimsConflict(5);
      await expect(directoryWith().reservationsKeyed()).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect(await keyings()).toEqual([]);
    });

    it("fails at once on the store's own failure", async () => {
      await writeLegacyAccount(store, 'ada@example.com');
      const append = store.append.bind(store);
      const appends = jest
        .spyOn(store, 'append')
        .mockImplementation((stream, events, expected) =>
          stream.startsWith('email-')
            ? Promise.reject(new Error('disk full'))
            : append(stream, events, expected),
        );
      await expect(directoryWith().reservationsKeyed()).rejects.toThrow('disk full');
      expect(appends).toHaveBeenCalledTimes(1);
    });

    it("leaves out an erased person's account: its address is free", async () => {
      const ada = await writeLegacyAccount(store, 'ada@example.com');
      await writeLegacyAccount(store, 'bob@example.com');
      const readAll = store.readAll.bind(store);
      jest.spyOn(store, 'readAll').mockImplementation(async function* (options) {
        for await (const event of readAll(options)) {
          const erased = event.type === 'AccountOpened.v1' && event.data.accountId === ada.accountId;
          yield erased ? { ...event, erased: true } : event;
        }
      });
      const directory = directoryWith();
      await directory.reservationsKeyed();
      expect(await keyings()).toEqual([expect.objectContaining({ accounts: 1, written: 1 })]);
      expect(await store.readStream(keyedStream('ada@example.com'))).toEqual([]);
    });

    it('reserves the address of an account opened without any reservation', async () => {
      const opened: AccountOpened = {
        type: 'AccountOpened.v1',
        data: {
          accountId: 'a-9',
          email: 'eve@example.com',
          userId: 'u-9',
          roles: ['user'],
          passwordHash: 'h',
          openedAt: 'x',
        },
      };
      await store.append(accountStreamName('a-9'), [toNewEvent(opened, context, clock.now())], 'no_stream');
      expect((await directoryWith().findByEmail('eve@example.com'))?.id).toBe('a-9');
    });
  });

  it('logs what a keying did', async () => {
    await writeLegacyAccount(store, 'ada@example.com');
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    try {
      await directoryWith().reservationsKeyed();
      expect(log).toHaveBeenCalledWith(
        `Reservation streams keyed under key ${addressHasher(SECRET, 'address-streams').keyId}: 1 accounts, ` +
          '1 reservations written, 0 addresses reserved for another account',
      );
      expect(log.mock.contexts[0]).toMatchObject({ context: 'AccountDirectory' });
    } finally {
      log.mockRestore();
    }
  });

  it('counts an address that two opened accounts hold as a conflict, and leaves it to the first', async () => {
    await openAccount(directoryWith(OTHER_SECRET), 'ada@example.com', 'a-1');
    // Under plain names, an account was opened for the same address meanwhile.
    await writeLegacyAccount(store, 'ada@example.com');
    const directory = directoryWith();
    await directory.reservationsKeyed();
    expect((await directory.findByEmail('ada@example.com'))?.id).toBe('a-1');
    expect(await keyings()).toEqual([expect.objectContaining({ accounts: 2, written: 1, conflicts: 1 })]);
  });
});
