import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import {
  Account,
  accountDecider,
  AccountOpened,
  accountStreamName,
  AddressHash,
  addressHasher,
  EmailReserved,
  emailStreamNameFor,
  RESERVATION_KEYS_STREAM,
  ReservationsKeyed,
} from '@chronicle/domain';
import {
  comparePositions,
  EventStore,
  Position,
  RecordedEvent,
  WrongExpectedRevisionError,
} from '@chronicle/event-store';
import { EmailTakenError } from '../shared/application-errors';
import { Clock } from '../shared/clock';
import { CommandContext, SYSTEM_ACTOR, SYSTEM_AUTH } from '../shared/command-context';
import { EventSourcedRepository, toNewEvent } from '../shared/event-sourced-repository';

/** What claiming a reservation stream for an account found: written now, already its, or another's. */
type Claim = 'written' | 'held' | 'taken';

/** Attempts at one migration claim that concurrent writers keep beating. */
const CLAIM_ATTEMPTS = 5;

/**
 * Finds accounts by e-mail through their `email-<hash>` reservation streams: the event store
 * itself keeps addresses unique, no read model is involved. The hash is keyed with the server
 * secret (`addressHasher`, purpose `address-streams`), so a stream name confirms no guessed address
 * to anyone without it.
 */
@Injectable()
export class AccountDirectory {
  private readonly logger = new Logger('AccountDirectory');
  private readonly addressHash: AddressHash;
  private keyed: Promise<void> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly repository: EventSourcedRepository,
    private readonly clock: Clock,
    config: ChronicleConfig,
  ) {
    this.addressHash = addressHasher(config.tokenSecret, 'address-streams');
  }

  /**
   * The keyed hash that names the address's streams (`email-`, `resetrequest-`), given once every
   * opened account's reservation is under the current key.
   */
  async addressKey(email: string): Promise<string> {
    await this.reservationsKeyed();
    return this.addressHash(email);
  }

  async findByEmail(email: string): Promise<Account | null> {
    const reservation = await this.lastReservation(emailStreamNameFor(await this.addressKey(email)));
    return reservation ? this.findById(reservation.accountId) : null;
  }

  /**
   * The account that had the address reserved in `stream` when the event at `position` was
   * written, if any still has it.
   */
  async findByReservationBefore(stream: string, position: Position): Promise<Account | null> {
    const reservation = await this.lastReservation(stream);
    if (!reservation || comparePositions(reservation.position, position) >= 0) return null;
    return this.findById(reservation.accountId);
  }

  async findById(accountId: string): Promise<Account | null> {
    const { state } = await this.repository.load(accountDecider, accountStreamName(accountId));
    return state.exists ? state : null;
  }

  /**
   * Claims the address for `accountId`. A reservation whose account was never opened (the
   * writer died between the two appends) is taken over, so an address is never lost.
   */
  async reserveEmail(email: string, accountId: string, context: CommandContext): Promise<void> {
    const stream = emailStreamNameFor(await this.addressKey(email));
    try {
      if ((await this.claim(stream, accountId, context)) === 'taken') throw new EmailTakenError();
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) throw new EmailTakenError();
      throw error;
    }
  }

  /**
   * Resolves once every opened account's address has its reservation stream under the current
   * key: stores written before streams were keyed (plain SHA-256 names), or under another server
   * secret, are brought over first, once per process (a failure is retried at the next call).
   */
  reservationsKeyed(): Promise<void> {
    this.keyed ??= this.keyReservations().catch((error: unknown) => {
      this.keyed = null;
      throw error;
    });
    return this.keyed;
  }

  /**
   * Writes a reservation under the current key for every opened account that lacks one, then
   * records ReservationsKeyed.v1. Idempotent: a run cut short (a crash) is finished by the next,
   * which finds the reservations already written and writes the rest; several processes may run
   * it at once. The old streams stay (the history is never rewritten): requests stored before
   * name them, and keep working.
   */
  private async keyReservations(): Promise<void> {
    const { keyId } = this.addressHash;
    const recorded = (await this.store.readStream(RESERVATION_KEYS_STREAM)).at(-1);
    if (recorded) {
      if ((recorded.data as ReservationsKeyed['data']).keyId === keyId) return;
    } else if (await this.bornUnderThisKey()) {
      return;
    }
    const context: CommandContext = { actor: SYSTEM_ACTOR, correlationId: randomUUID(), auth: SYSTEM_AUTH };
    const tally = { accounts: 0, written: 0, conflicts: 0 };
    for await (const opened of this.store.readAll({ eventTypes: ['AccountOpened.v1'] })) {
      const { accountId, email } = opened.data as AccountOpened['data'];
      // An erased person's address is gone, and so is its claim on it.
      if (opened.erased) continue;
      tally.accounts += 1;
      const claim = await this.claimRetrying(emailStreamNameFor(this.addressHash(email)), accountId, context);
      if (claim === 'written') tally.written += 1;
      if (claim === 'taken') tally.conflicts += 1;
    }
    // No account yet: nothing to key, and the first reservation will be under this key.
    if (tally.accounts === 0) return;
    const event: ReservationsKeyed = { type: 'ReservationsKeyed.v1', data: { keyId, ...tally } };
    try {
      await this.store.append(
        RESERVATION_KEYS_STREAM,
        [toNewEvent(event, context, this.clock.now())],
        recorded?.revision ?? 'no_stream',
      );
    } catch (error) {
      // Another process finished the same keying first and recorded it.
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
    }
    this.logger.log(
      `Reservation streams keyed under key ${keyId}: ${tally.accounts} accounts, ` +
        `${tally.written} reservations written, ${tally.conflicts} addresses reserved for another account`,
    );
  }

  /**
   * Whether the store's reservations were written under the current key from the start: its first
   * reservation of an opened account is. O(1) at every start of a store that needs no keying.
   */
  private async bornUnderThisKey(): Promise<boolean> {
    // One reservation per read: the store's read path gathers events in batches before it hands
    // any over, which on a log of few reservations is a scan of all of it (1.2 s of every
    // restart on 2,000,000 events, profiled).
    for (let after: Position | undefined; ;) {
      let reserved: RecordedEvent | undefined;
      const page = { ...(after === undefined ? {} : { after }), eventTypes: ['EmailReserved.v1'], limit: 1 };
      for await (const event of this.store.readAll(page)) reserved = event;
      if (reserved === undefined) return false;
      const account = await this.findById((reserved.data as EmailReserved['data']).accountId);
      if (account) return reserved.stream === emailStreamNameFor(this.addressHash(account.email));
      after = reserved.position;
    }
  }

  private async claimRetrying(stream: string, accountId: string, context: CommandContext): Promise<Claim> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.claim(stream, accountId, context);
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || attempt === CLAIM_ATTEMPTS) throw error;
      }
    }
  }

  /** Reserves `stream` for `accountId` unless an account that exists holds it. */
  private async claim(stream: string, accountId: string, context: CommandContext): Promise<Claim> {
    const reservation = await this.lastReservation(stream);
    if (reservation?.accountId === accountId) return 'held';
    if (reservation && (await this.findById(reservation.accountId))) return 'taken';
    const event: EmailReserved = { type: 'EmailReserved.v1', data: { accountId } };
    await this.store.append(
      stream,
      [toNewEvent(event, context, this.clock.now())],
      reservation?.revision ?? 'no_stream',
    );
    return 'written';
  }

  private async lastReservation(
    stream: string,
  ): Promise<{ accountId: string; revision: number; position: Position } | null> {
    const events = await this.store.readStream(stream);
    const last = events[events.length - 1];
    return last
      ? {
          accountId: (last.data as EmailReserved['data']).accountId,
          revision: last.revision,
          position: last.position,
        }
      : null;
  }
}
