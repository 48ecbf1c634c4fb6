import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountStreamName, SubjectErased, userStreamName } from '@chronicle/domain';
import { DataKeyRing, ErasureLog, PersonalDataEventStore } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { RecordingMailer } from '../../shared/test-doubles.spec-helper';
import { ERASURE_NOW, erasureWorld, writeEvent, writePerson } from '../erasure.spec-helper';
import { ErasureCompletion } from './erasure-completion';

const CONTEXT: CommandContext = {
  actor: 'admin-1',
  correlationId: 'c-complete',
  auth: { method: 'system', tokenId: null },
};
const ERASED: SubjectErased['data'] = {
  subject: userStreamName('u-1'),
  kind: 'user',
  erasedAt: new Date(ERASURE_NOW).toISOString(),
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
    mailer = new ForgettingMailer();
    ({ store, keys, log, repository, completion } = erasureWorld(dir, mailer));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The user u-1, erased, whose account `accountId` names; opened only when `opened`. */
  async function erasedPerson(accountId: string, opened: boolean): Promise<void> {
    await writePerson(store, CONTEXT, 'u-1', accountId, opened);
    await writeEvent(store, CONTEXT, userStreamName('u-1'), 'SubjectErased.v1', { ...ERASED });
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
