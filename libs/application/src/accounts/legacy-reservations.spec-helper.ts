import { createHash, randomUUID } from 'node:crypto';
import {
  AccountOpened,
  accountStreamName,
  EmailReserved,
  normaliseEmail,
  PasswordResetRequestedV1,
  Role,
  UserRegistered,
  userStreamName,
} from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { SYSTEM_ACTOR, SYSTEM_AUTH } from '../shared/command-context';
import { toNewEvent } from '../shared/event-sourced-repository';

/**
 * A store as builds before keyed reservation streams wrote it: an address named by the plain
 * SHA-256 of its normalised form, in `email-<sha256>` and `resetrequest-<sha256>`. For the tests of
 * the keying (unit, e2e, faults) only: nothing in the service computes this hash any more.
 */
export const plainAddressHash = (email: string): string =>
  createHash('sha256').update(normaliseEmail(email)).digest('hex');

const context = { actor: SYSTEM_ACTOR, correlationId: 'legacy-build', auth: SYSTEM_AUTH };

export interface LegacyAccount {
  accountId: string;
  userId: string;
  email: string;
}

/**
 * An account opened by an older build: its reservation in `email-<sha256>`, then its user and its
 * account, in that build's order. `opened: false`: the writer died after the reservation.
 */
export async function writeLegacyAccount(
  store: EventStore,
  email: string,
  { passwordHash = '$argon2id$v=19$m=19456,t=2,p=1$legacy', opened = true, roles = ['user'] as Role[] } = {},
): Promise<LegacyAccount> {
  const accountId = randomUUID();
  const userId = randomUUID();
  const now = new Date();
  const reserved: EmailReserved = { type: 'EmailReserved.v1', data: { accountId } };
  await store.append(`email-${plainAddressHash(email)}`, [toNewEvent(reserved, context, now)], 'any');
  if (opened) {
    const registered: UserRegistered = {
      type: 'UserRegistered.v2',
      data: { userId, accountId, name: 'Legacy User', age: 40, createdon: now.toISOString() },
    };
    await store.append(userStreamName(userId), [toNewEvent(registered, context, now)], 'no_stream');
    const openedEvent: AccountOpened = {
      type: 'AccountOpened.v1',
      data: { accountId, email, userId, roles, passwordHash, openedAt: now.toISOString() },
    };
    await store.append(accountStreamName(accountId), [toNewEvent(openedEvent, context, now)], 'no_stream');
  }
  return { accountId, userId, email };
}

/** A reset request an older build stored, still waiting for its e-mail. */
export async function writeLegacyResetRequest(store: EventStore, email: string): Promise<void> {
  const now = new Date();
  const requested: PasswordResetRequestedV1 = {
    type: 'PasswordResetRequested.v1',
    data: { emailHash: plainAddressHash(email), requestedAt: now.toISOString() },
  };
  await store.append(`resetrequest-${plainAddressHash(email)}`, [toNewEvent(requested, context, now)], 'any');
}
