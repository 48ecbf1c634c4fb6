import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountStreamName, customerStreamName, NotFoundError, userStreamName } from '@chronicle/domain';
import { DataKeyRing, ErasureLog, PersonalDataEventStore } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { RecordingMailer } from '../../shared/test-doubles.spec-helper';
import { ErasureCompletion } from '../complete-erasure/erasure-completion';
import { ERASURE_NOW as NOW, erasureWorld, writeEvent, writePerson } from '../erasure.spec-helper';
import { EraseSubjectCommand } from './erase-subject.command';
import { EraseSubjectHandler } from './erase-subject.handler';

const CONTEXT: CommandContext = {
  actor: 'admin-1',
  correlationId: 'c-erase',
  auth: { method: 'system', tokenId: null },
};

describe('EraseSubjectHandler', () => {
  let dir: string;
  let store: PersonalDataEventStore;
  let keys: DataKeyRing;
  let log: ErasureLog;
  let mailer: RecordingMailer;
  let completion: ErasureCompletion;
  let handler: EraseSubjectHandler;
  /** How often each stream was read, through the EventStore port. */
  let reads: Map<string, number>;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'erase-subject-'));
    mailer = new RecordingMailer();
    const world = erasureWorld(dir, mailer);
    ({ store, keys, log, completion } = world);
    reads = new Map();
    const readStream = store.readStream.bind(store);
    jest.spyOn(store, 'readStream').mockImplementation((stream, options) => {
      reads.set(stream, (reads.get(stream) ?? 0) + 1);
      return readStream(stream, options);
    });
    handler = new EraseSubjectHandler(world.repository, store, completion);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const write = (stream: string, type: string, data: Record<string, unknown>) =>
    writeEvent(store, CONTEXT, stream, type, data);

  /** A person: a user with its account, as the history holds them. */
  const person = (userId: string, accountId: string) => writePerson(store, CONTEXT, userId, accountId);

  async function keyState(kind: 'user' | 'customer', id: string): Promise<string | undefined> {
    return (await keys.forReading([{ kind, id }])).get(`${kind}-${id}`)?.state;
  }

  it("erases a person reading the user's stream twice: the decision, then the erasure as recorded", async () => {
    await person('u-1', 'a-1');
    reads.clear();

    const result = await handler.execute(new EraseSubjectCommand('user', 'u-1', CONTEXT));

    expect(result).toMatchObject({
      subject: 'user-u-1',
      kind: 'user',
      erasedAt: new Date(NOW).toISOString(),
    });
    expect(reads.get('user-u-1')).toBe(2);
    // Everything the erasure does, done.
    expect(await keyState('user', 'u-1')).toBe('erased');
    expect((await log.read()).erasures).toMatchObject([{ subject: { kind: 'user', id: 'u-1' } }]);
    expect((await store.readStream(accountStreamName('a-1'))).map((event) => event.type)).toEqual([
      'AccountOpened.v1',
      'AccountClosed.v1',
    ]);
  });

  it('erases a customer reading its stream twice, and again on a repeat, which adds nothing', async () => {
    await write(customerStreamName(7), 'CustomerRegistered.v1', {
      customerId: 7,
      name: 'Zoë Lovelace',
      email: 'zoe@example.com',
      createdon: '2026-11-27T07:00:00.000Z',
    });
    reads.clear();

    const first = await handler.execute(new EraseSubjectCommand('customer', '7', CONTEXT));
    expect(reads.get('customer-7')).toBe(2);
    expect(await keyState('customer', '7')).toBe('erased');

    reads.clear();
    expect(await handler.execute(new EraseSubjectCommand('customer', '7', CONTEXT))).toEqual(first);
    expect(reads.get('customer-7')).toBe(2);
    expect((await log.read()).erasures).toHaveLength(1);
  });

  it('completes an erasure found by the saga, with no events in hand, reading the stream once', async () => {
    await person('u-2', 'a-2');
    await write(userStreamName('u-2'), 'SubjectErased.v1', {
      subject: 'user-u-2',
      kind: 'user',
      erasedAt: '2026-11-27T07:30:00.000Z',
    });
    reads.clear();

    await completion.complete(
      { subject: 'user-u-2', kind: 'user', erasedAt: '2026-11-27T07:30:00.000Z' },
      CONTEXT,
    );

    expect(reads.get('user-u-2')).toBe(1);
    expect(await keyState('user', 'u-2')).toBe('erased');
    expect((await store.readStream(accountStreamName('a-2'))).map((event) => event.type)).toContain(
      'AccountClosed.v1',
    );
  });

  it('names no customer with anything but a customer number', async () => {
    await expect(handler.execute(new EraseSubjectCommand('customer', '07', CONTEXT))).rejects.toMatchObject({
      code: 'not-found',
    });
    expect(reads.size).toBe(0);
  });

  it('knows no customer by anything but a customer number, as GET /customers/{id}', async () => {
    await expect(handler.execute(new EraseSubjectCommand('customer', 'abc', CONTEXT))).rejects.toThrow(
      new NotFoundError('Customer'),
    );
  });
});
