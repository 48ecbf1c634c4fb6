import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { CommandBus, ICommand } from '@nestjs/cqrs';
import { EVENT_SCHEMAS } from '@chronicle/domain';
import {
  EVENTS_FILE,
  position,
  RecordedEvent,
  SqliteCheckpointStore,
  SqliteEventStore,
} from '@chronicle/event-store';
import { MailRejectedError } from '@chronicle/mail';
import { passwordSaga, Saga } from './password.saga';
import { SagaProcessor } from './saga-processor';

class Handle implements ICommand {
  constructor(readonly event: RecordedEvent) {}
}

const saga: Saga = {
  name: 'saga:test',
  eventTypes: ['Wanted.v1'],
  commandFor: (event) => (event.type === 'Wanted.v1' ? new Handle(event) : null),
};

const event = (type: string) => ({
  id: randomUUID(),
  type,
  data: {},
  metadata: { actor: 'system', correlationId: 'c', causationId: null, occurredAt: new Date().toISOString() },
});

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SagaProcessor', () => {
  let dir: string;
  let store: SqliteEventStore;
  let checkpoints: SqliteCheckpointStore;
  let handled: string[];
  let failures: number;
  let attempts: number;
  /** Events whose command fails for good, and how. */
  let refused: Map<string, Error>;
  /** What the runner logs: kept off the test output, and asserted on where it matters. */
  let warnings: jest.SpyInstance;
  const bus = {
    execute: (command: Handle) => {
      attempts++;
      const refusal = refused.get(command.event.id);
      if (refusal) return Promise.reject(refusal);
      if (failures > 0) {
        failures--;
        return Promise.reject(new Error('mail server down'));
      }
      handled.push(command.event.id);
      return Promise.resolve();
    },
  } as unknown as CommandBus;
  const runner = (options: { maxAttempts?: number } = {}) =>
    new SagaProcessor(saga, store, bus, checkpoints, { retryDelayMs: 5, maxRetryDelayMs: 20, ...options });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'saga-processor-'));
    store = SqliteEventStore.open(dir);
    checkpoints = SqliteCheckpointStore.open(join(dir, EVENTS_FILE));
    handled = [];
    refused = new Map();
    failures = 0;
    attempts = 0;
    warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation();
    for (const level of ['log', 'error', 'debug'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation();
    }
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await checkpoints.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the command of every event that calls for one, history then live, in order', async () => {
    const [a, b] = [event('Wanted.v1'), event('Wanted.v1')];
    await store.append('s-1', [a, event('Other.v1'), b], 'no_stream');
    const subject = runner();
    void subject.start();
    await until(() => handled.length === 2);
    const c = event('Wanted.v1');
    await store.append('s-2', [c], 'no_stream');
    await until(() => handled.length === 3);
    await subject.stop();
    expect(handled).toEqual([a.id, b.id, c.id]);
  });

  it('retries a failing command until it succeeds, holding back the events after it', async () => {
    failures = 3;
    const [a, b] = [event('Wanted.v1'), event('Wanted.v1')];
    await store.append('s-1', [a, b], 'no_stream');
    const subject = runner();
    void subject.start();
    await until(() => handled.length === 2);
    await subject.stop();
    expect(handled).toEqual([a.id, b.id]);
    expect(failures).toBe(0);
    const logged = warnings.mock.calls.map(([message]) => String(message));
    expect(logged).toHaveLength(3);
    logged.forEach((message, at) => {
      expect(message).toContain(`Wanted.v1 ${a.id}`);
      expect(message).toContain(`(attempt ${at + 1}): mail server down`);
    });
    expect(await checkpoints.parked()).toEqual([]);
  });

  it('parks an event whose e-mail bounces and goes on with the next; a restart leaves it parked', async () => {
    const [bounced, next] = [event('Wanted.v1'), event('Wanted.v1')];
    refused.set(bounced.id, new MailRejectedError(550, '550 5.1.1 mailbox unavailable'));
    await store.append('s-1', [bounced, next], 'no_stream');
    const first = runner();
    void first.start();
    await until(() => handled.length === 1);
    await first.stop();
    expect(handled).toEqual([next.id]);
    const parked = await checkpoints.parked(saga.name);
    expect(parked).toEqual([
      expect.objectContaining({
        eventId: bounced.id,
        type: 'Wanted.v1',
        attempts: 1,
        reason: 'The mail server refused the message: 550 5.1.1 mailbox unavailable',
      }),
    ]);
    attempts = 0;
    const second = runner();
    await second.start();
    await second.stop();
    expect(attempts).toBe(0);
    expect(await checkpoints.parked(saga.name)).toEqual(parked);
  });

  it('parks an event after too many transient failures, counting them per event', async () => {
    failures = 5;
    const [a, b] = [event('Wanted.v1'), event('Wanted.v1')];
    await store.append('s-1', [a, b], 'no_stream');
    const subject = runner();
    void subject.start();
    await until(() => handled.length === 1);
    await subject.stop();
    expect(handled).toEqual([b.id]);
    expect(await checkpoints.parked()).toEqual([
      expect.objectContaining({ eventId: a.id, attempts: 5, reason: 'mail server down' }),
    ]);
  });

  it('resumes after its checkpoint: a restart handles nothing twice', async () => {
    const a = event('Wanted.v1');
    await store.append('s-1', [a], 'no_stream');
    const first = runner();
    void first.start();
    await until(() => handled.length === 1);
    await first.stop();
    const head = await store.headPosition();
    expect(await checkpoints.load(saga.name)).toEqual(head);

    const b = event('Wanted.v1');
    await store.append('s-2', [b], 'no_stream');
    const second = runner();
    void second.start();
    await until(() => handled.length === 2);
    await second.stop();
    expect(handled).toEqual([a.id, b.id]);
  });

  it('is fed only the event types it handles, and still moves its checkpoint past the others', async () => {
    const seen = jest.spyOn(saga, 'commandFor');
    const subject = runner();
    void subject.start();
    await store.append('s-1', [event('Other.v1'), event('Wanted.v1')], 'no_stream');
    await until(() => handled.length === 1);
    await store.append('s-2', [event('Other.v1'), event('Other.v1')], 'no_stream');
    const head = await store.headPosition();
    let checkpoint = await checkpoints.load(saga.name);
    for (const deadline = Date.now() + 5_000; checkpoint?.commit !== head?.commit && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      checkpoint = await checkpoints.load(saga.name);
    }
    await subject.stop();
    const types = seen.mock.calls.map(([given]) => given.type);
    seen.mockRestore();

    expect(types).toEqual(['Wanted.v1']);
    expect(checkpoint).toEqual(head);
  });

  it('stops at start, pointing at projections rebuild, when its checkpoint lies beyond the log', async () => {
    await store.append('s-1', [event('Wanted.v1')], 'no_stream');
    await checkpoints.store(saga.name, position(5));
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const subject = runner();
    void subject.start();
    let logged: unknown[][];
    try {
      await until(() => errors.mock.calls.length > 0);
      const wanted = event('Wanted.v1');
      await store.append('s-2', [wanted], 'no_stream');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await subject.stop();
    } finally {
      logged = [...errors.mock.calls];
      errors.mockRestore();
    }
    expect(logged).toHaveLength(1);
    expect(String(logged[0][0])).toMatch(/saga:test processor \(5\) lies beyond .*projections rebuild/);
    expect(handled).toEqual([]);
  });

  it('stops promptly even while a command keeps failing', async () => {
    failures = Number.POSITIVE_INFINITY;
    await store.append('s-1', [event('Wanted.v1')], 'no_stream');
    const subject = runner({ maxAttempts: 1_000 });
    void subject.start();
    await until(() => attempts >= 3);
    await subject.stop();
    expect(handled).toEqual([]);
    expect(await checkpoints.load(saga.name)).toBeNull();
  });

  it('declares exactly the event types the password saga has work for', () => {
    const commandTypes = Object.keys(EVENT_SCHEMAS).filter(
      (type) =>
        passwordSaga.commandFor({
          ...event(type),
          stream: 's',
          revision: 0,
          position: position(1),
          recordedAt: '2026-01-01T00:00:00.000Z',
          hash: 'a'.repeat(64),
        }) !== null,
    );
    expect([...passwordSaga.eventTypes].sort()).toEqual(commandTypes.sort());
  });
});
