import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountStreamName, eventSchemaOf, SubjectErased, userStreamName } from '@chronicle/domain';
import {
  DataKeyRing,
  ErasureLog,
  PersonalDataEventStore,
  SqliteDataKeyStore,
  SqliteEventStore,
} from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository, toNewEvent } from '../../shared/event-sourced-repository';
import { FixedClock, RecordingMailer } from '../../shared/test-doubles.spec-helper';
import { ErasureCompletion } from './erasure-completion';

const SECRET = Buffer.from('the data key secret of this spec, long enough');
const CONTEXT: CommandContext = {
  actor: 'admin-1',
  correlationId: 'c-complete',
  auth: { method: 'system', tokenId: null },
};
const NOW = Date.parse('2026-11-27T08:00:00.000Z');
const ERASED: SubjectErased['data'] = {
  subject: userStreamName('u-1'),
  kind: 'user',
  erasedAt: new Date(NOW).toISOString(),
};

/** A mailer that keeps messages, as the outbox does, and says which addresses it was asked to forget. */
class ForgettingMailer extends RecordingMailer {
  readonly forgotten: string[] = [];

  override forget(address: string): Promise<number> {
    this.forgotten.push(address);
    return Promise.resolve(0);
  }
}

describe('ErasureCompletion', () => {
  let dir: string;
  let store: PersonalDataEventStore;
  let keys: DataKeyRing;
  let log: ErasureLog;
  let mailer: ForgettingMailer;
  let repository: EventSourcedRepository;
  let completion: ErasureCompletion;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'erasure-completion-'));
    keys = new DataKeyRing(new SqliteDataKeyStore(join(dir, 'data'), SECRET));
    store = new PersonalDataEventStore(
      SqliteEventStore.open(join(dir, 'data')),
      keys,
      (type) => eventSchemaOf(type)?.personal,
    );
    log = new ErasureLog(join(dir, 'erasures.jsonl'));
    mailer = new ForgettingMailer();
    repository = new EventSourcedRepository(store, new FixedClock(NOW));
    completion = new ErasureCompletion(repository, keys, mailer, store, log);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function write(stream: string, type: string, data: Record<string, unknown>): Promise<void> {
    await store.append(stream, [toNewEvent({ type, data }, CONTEXT, new Date(NOW - 60_000))], 'any');
  }

  /** A user whose account `accountId` names; opened only when `opened`. */
  async function erasedPerson(accountId: string, opened: boolean): Promise<void> {
    await write(userStreamName('u-1'), 'UserRegistered.v2', {
      userId: 'u-1',
      accountId,
      name: 'Zoë Lovelace',
      age: 36,
      createdon: '2026-11-27T07:00:00.000Z',
    });
    if (opened) {
      await write(accountStreamName(accountId), 'AccountOpened.v1', {
        accountId,
        email: 'zoe@example.com',
        userId: 'u-1',
        roles: ['user'],
        passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA',
        openedAt: '2026-11-27T07:00:00.000Z',
      });
    }
    await write(userStreamName('u-1'), 'SubjectErased.v1', { ...ERASED });
  }

  it("forgets the e-mails kept for the account's address before it closes the account", async () => {
    await erasedPerson('a-1', true);

    await completion.complete(ERASED, CONTEXT);

    expect(mailer.forgotten).toEqual(['zoe@example.com']);
    expect((await store.readStream(accountStreamName('a-1'))).map((event) => event.type)).toEqual([
      'AccountOpened.v1',
      'AccountClosed.v1',
    ]);
  });

  it('completes for a user whose account was never opened (a crash between the two): none to close', async () => {
    await erasedPerson('a-never', false);

    await completion.complete(ERASED, CONTEXT);

    expect(mailer.forgotten).toEqual([]);
    expect(await store.readStream(accountStreamName('a-never'))).toEqual([]);
    expect((await keys.forReading([{ kind: 'user', id: 'u-1' }])).get('user-u-1')?.state).toBe('erased');
  });

  it('fails, keeping the key, when closing the account fails for another reason than its absence', async () => {
    await erasedPerson('a-1', true);
    jest.spyOn(repository, 'handle').mockRejectedValueOnce(new Error('the store is unavailable'));

    await expect(completion.complete(ERASED, CONTEXT)).rejects.toThrow('the store is unavailable');

    expect((await log.read()).erasures).toEqual([]);
    expect((await keys.forReading([{ kind: 'user', id: 'u-1' }])).get('user-u-1')?.state).toBe('active');
  });

  it('logs an erasure once: a completion repeated after the key is gone adds no line', async () => {
    await erasedPerson('a-1', true);

    await completion.complete(ERASED, CONTEXT);
    await completion.complete(ERASED, CONTEXT);

    // Read back, a line written twice reads as one: the file itself holds one.
    expect(
      readFileSync(log.file, 'utf8')
        .split('\n')
        .filter((line) => line !== ''),
    ).toHaveLength(1);
  });
});
