import { join } from 'node:path';
import { accountStreamName, eventSchemaOf, userStreamName } from '@chronicle/domain';
import {
  DataKeyRing,
  ErasureLog,
  PersonalDataEventStore,
  SqliteDataKeyStore,
  SqliteEventStore,
} from '@chronicle/event-store';
import { Mailer } from '@chronicle/mail';
import { CommandContext } from '../shared/command-context';
import { EventSourcedRepository, toNewEvent } from '../shared/event-sourced-repository';
import { FixedClock } from '../shared/test-doubles.spec-helper';
import { ErasureCompletion } from './complete-erasure/erasure-completion';

const SECRET = Buffer.from('the data key secret of this spec, long enough');
export const ERASURE_NOW = Date.parse('2026-11-27T08:00:00.000Z');

/** What an erasure works on, as the service composes it, in `dir`: events, keys and the erasure log. */
export function erasureWorld(dir: string, mailer: Mailer) {
  const keys = new DataKeyRing(new SqliteDataKeyStore(join(dir, 'data'), SECRET));
  const store = new PersonalDataEventStore(
    SqliteEventStore.open(join(dir, 'data')),
    keys,
    (type) => eventSchemaOf(type)?.personal,
  );
  const log = new ErasureLog(join(dir, 'erasures.jsonl'));
  const repository = new EventSourcedRepository(store, new FixedClock(ERASURE_NOW));
  const completion = new ErasureCompletion(repository, keys, mailer, store, log);
  return { keys, store, log, repository, completion };
}

/** Appends one event to `stream`, written a minute before ERASURE_NOW. */
export async function writeEvent(
  store: PersonalDataEventStore,
  context: CommandContext,
  stream: string,
  type: string,
  data: Record<string, unknown>,
): Promise<void> {
  await store.append(stream, [toNewEvent({ type, data }, context, new Date(ERASURE_NOW - 60_000))], 'any');
}

/** A person as the history holds them: the user, then (when `opened`) its account. */
export async function writePerson(
  store: PersonalDataEventStore,
  context: CommandContext,
  userId: string,
  accountId: string,
  opened = true,
): Promise<void> {
  await writeEvent(store, context, userStreamName(userId), 'UserRegistered.v2', {
    userId,
    accountId,
    name: 'Zoë Lovelace',
    age: 36,
    createdon: '2026-11-27T07:00:00.000Z',
  });
  if (!opened) return;
  await writeEvent(store, context, accountStreamName(accountId), 'AccountOpened.v1', {
    accountId,
    email: 'zoe@example.com',
    userId,
    roles: ['user'],
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA',
    openedAt: '2026-11-27T07:00:00.000Z',
  });
}
