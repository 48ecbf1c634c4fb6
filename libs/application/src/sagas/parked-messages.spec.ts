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
  let outcome: () => Promise<void>;
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

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parked-'));
    store = SqliteEventStore.open(dir);
    checkpoints = SqliteCheckpointStore.open(join(dir, EVENTS_FILE));
    const id = randomUUID();
    await store.append(
      'resetrequest-ab',
      [
        {
          id,
          type: 'PasswordResetRequested.v2',
          data: { reservation: 'email-ab', requestedAt: new Date().toISOString() },
          metadata: {
            actor: 'system',
            correlationId: 'c',
            causationId: null,
            occurredAt: new Date().toISOString(),
          },
        },
      ],
      'any',
    );
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
    outcome = () => Promise.resolve();
    await expect(retry(passwordSaga.name, request.id)).resolves.toEqual({ retried: true });
    expect(await checkpoints.parked()).toEqual([]);
  });

  it('keeps it parked, with the new reason and one more attempt, when it fails again', async () => {
    outcome = () => Promise.reject(new MailRejectedError(550, '550 still bouncing'));
    await expect(retry(passwordSaga.name, request.id)).rejects.toMatchObject({ code: 'retry-failed' });
    expect(await checkpoints.parked()).toEqual([
      expect.objectContaining({
        eventId: request.id,
        attempts: 2,
        reason: 'The mail server refused the message: 550 still bouncing',
      }),
    ]);
  });

  it('says so for a message that is not parked, or not a saga’s', async () => {
    await expect(retry(passwordSaga.name, randomUUID())).rejects.toBeInstanceOf(ParkedMessageError);
    await checkpoints.park(parkedFor(request, 'read-models'));
    await expect(retry('read-models', request.id)).rejects.toMatchObject({ code: 'not-retryable' });
    expect(await checkpoints.unpark('read-models', request.id)).toBe(true);
    expect(await checkpoints.unpark('read-models', request.id)).toBe(false);
  });
});
