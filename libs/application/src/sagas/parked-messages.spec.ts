import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandBus } from '@nestjs/cqrs';
import {
  EVENTS_FILE,
  ParkedMessage,
  RecordedEvent,
  SqliteCheckpointStore,
  SqliteEventStore,
} from '@chronicle/event-store';
import { MailRejectedError } from '@chronicle/mail';
import { passwordSaga } from './password.saga';
import { ParkedMessageError, retryParkedMessage } from './parked-messages';

describe('retryParkedMessage', () => {
  let dir: string;
  let store: SqliteEventStore;
  let checkpoints: SqliteCheckpointStore;
  let request: RecordedEvent;
  let outcome: jest.Mock<Promise<void>, []>;
  const bus = { execute: () => outcome() } as unknown as CommandBus;

  const parkedFor = (event: RecordedEvent, processor = passwordSaga.name): ParkedMessage => ({
    processor,
    eventId: event.id,
    stream: event.stream,
    revision: event.revision,
    type: event.type,
    position: event.position,
    reason: 'The mail server refused the message: 550',
    attempts: 1,
    parkedAt: new Date().toISOString(),
  });

  /** A reset request, appended to its stream with the same metadata as the first. */
  const requested = (id: string = randomUUID()) => ({
    id,
    type: 'PasswordResetRequested.v2',
    data: { reservation: 'email-ab', requestedAt: new Date().toISOString() },
    metadata: {
      actor: 'system',
      correlationId: 'c',
      causationId: null,
      occurredAt: new Date().toISOString(),
    },
  });

  beforeEach(async () => {
    outcome = jest.fn(() => Promise.resolve());
    dir = mkdtempSync(join(tmpdir(), 'parked-'));
    store = SqliteEventStore.open(dir);
    checkpoints = SqliteCheckpointStore.open(join(dir, EVENTS_FILE));
    await store.append('resetrequest-ab', [requested()], 'any');
    [request] = await store.readStream('resetrequest-ab');
    await checkpoints.park(parkedFor(request));
  });
  afterEach(async () => {
    await checkpoints.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const retry = (processor: string, eventId: string) =>
    retryParkedMessage(store, checkpoints, bus, processor, eventId);

  it('runs the message again and unparks it when it succeeds', async () => {
    await expect(retry(passwordSaga.name, request.id)).resolves.toEqual({ retried: true });
    expect(outcome).toHaveBeenCalledTimes(1);
    expect(await checkpoints.parked()).toEqual([]);
  });

  it('retries the message asked for, read at its own revision, and leaves the others parked', async () => {
    await store.append('resetrequest-ab', [requested()], 'any');
    const [, later] = await store.readStream('resetrequest-ab');
    await checkpoints.park(parkedFor(later));

    await expect(retry(passwordSaga.name, later.id)).resolves.toEqual({ retried: true });

    expect(outcome).toHaveBeenCalledTimes(1);
    expect(await checkpoints.parked()).toEqual([expect.objectContaining({ eventId: request.id })]);
  });

  it('keeps it parked, with the new reason and one more attempt, when it fails again', async () => {
    outcome.mockRejectedValue(new MailRejectedError(550, '550 still bouncing'));
    await expect(retry(passwordSaga.name, request.id)).rejects.toMatchObject({
      name: 'ParkedMessageError',
      code: 'retry-failed',
      message: `${request.id} failed again and stays parked: The mail server refused the message: 550 still bouncing`,
    });
    expect(await checkpoints.parked()).toEqual([
      expect.objectContaining({
        eventId: request.id,
        attempts: 2,
        reason: 'The mail server refused the message: 550 still bouncing',
      }),
    ]);
  });

  it('says so for a message that is not parked, or not a saga’s', async () => {
    const unknown = randomUUID();
    const notParked = retry(passwordSaga.name, unknown);
    await expect(notParked).rejects.toBeInstanceOf(ParkedMessageError);
    await expect(notParked).rejects.toMatchObject({
      name: 'ParkedMessageError',
      code: 'parked-message-not-found',
      message: `saga:password has no parked message ${unknown}`,
    });
    await checkpoints.park(parkedFor(request, 'read-models'));
    await expect(retry('read-models', request.id)).rejects.toMatchObject({
      code: 'not-retryable',
      message: 'read-models is not a saga: fix the projection, then run `projections rebuild`',
    });
    expect(outcome).not.toHaveBeenCalled();
    expect(await checkpoints.unpark('read-models', request.id)).toBe(true);
    expect(await checkpoints.unpark('read-models', request.id)).toBe(false);
  });

  it.each([
    [
      'its revision lies past the end of the stream',
      (message: ParkedMessage) => ({ ...message, revision: 7 }),
    ],
    [
      'another event stands at its revision',
      (message: ParkedMessage) => ({ ...message, eventId: randomUUID() }),
    ],
  ])('does not run a parked message whose event is gone (%s), and leaves it parked', async (_, moved) => {
    await checkpoints.unpark(passwordSaga.name, request.id);
    const gone = moved(parkedFor(request));
    await checkpoints.park(gone);

    await expect(retry(passwordSaga.name, gone.eventId)).rejects.toMatchObject({
      name: 'ParkedMessageError',
      code: 'parked-message-not-found',
      message: `Event ${gone.eventId} is no longer in resetrequest-ab`,
    });

    expect(outcome).not.toHaveBeenCalled();
    expect(await checkpoints.parked()).toEqual([gone]);
  });
});
