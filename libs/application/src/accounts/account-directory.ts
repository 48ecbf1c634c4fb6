import { Injectable } from '@nestjs/common';
import {
  Account,
  accountDecider,
  accountStreamName,
  emailHash,
  emailStreamNameFor,
  EmailReserved,
} from '@chronicle/domain';
import { comparePositions, EventStore, Position, WrongExpectedRevisionError } from '@chronicle/event-store';
import { EmailTakenError } from '../shared/application-errors';
import { Clock } from '../shared/clock';
import { CommandContext } from '../shared/command-context';
import { EventSourcedRepository, toNewEvent } from '../shared/event-sourced-repository';

/**
 * Finds accounts by e-mail through their `email-<hash>` reservation streams: the event store
 * itself keeps addresses unique, no read model is involved.
 */
@Injectable()
export class AccountDirectory {
  constructor(
    private readonly store: EventStore,
    private readonly repository: EventSourcedRepository,
    private readonly clock: Clock,
  ) {}

  findByEmail(email: string): Promise<Account | null> {
    return this.findByEmailHash(emailHash(email));
  }

  async findByEmailHash(hash: string): Promise<Account | null> {
    const reservation = await this.lastReservation(hash);
    return reservation ? this.findById(reservation.accountId) : null;
  }

  /** The account that had the address when the event at `position` was written, if any still has it. */
  async findByEmailHashBefore(hash: string, position: Position): Promise<Account | null> {
    const reservation = await this.lastReservation(hash);
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
    const hash = emailHash(email);
    const reservation = await this.lastReservation(hash);
    if (reservation && (await this.findById(reservation.accountId))) throw new EmailTakenError();
    const event: EmailReserved = { type: 'EmailReserved.v1', data: { accountId } };
    try {
      await this.store.append(
        emailStreamNameFor(hash),
        [toNewEvent(event, context, this.clock.now())],
        reservation?.revision ?? 'no_stream',
      );
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) throw new EmailTakenError();
      throw error;
    }
  }

  private async lastReservation(
    hash: string,
  ): Promise<{ accountId: string; revision: number; position: Position } | null> {
    const events = await this.store.readStream(emailStreamNameFor(hash));
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
