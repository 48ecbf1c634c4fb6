import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Decider, DomainEvent } from '@chronicle/domain';
import { SqliteEventStore } from '@chronicle/event-store';
import { recordSpans } from '@chronicle/tracing/testing';
import { SYSTEM_AUTH } from './command-context';
import { EventSourcedRepository } from './event-sourced-repository';
import { FixedClock, registerAda } from './test-doubles.spec-helper';

describe('EventSourcedRepository, traced', () => {
  const exporter = recordSpans();
  const context = { actor: 'a-1', correlationId: 'c-1', auth: SYSTEM_AUTH };
  let dir: string;
  let store: SqliteEventStore;
  let repository: EventSourcedRepository;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'repository-traced-'));
    store = SqliteEventStore.open(dir);
    repository = new EventSourcedRepository(store, new FixedClock(Date.parse('2026-11-27T09:00:00.000Z')));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives each command a span named by its type, with its stream', async () => {
    const userId = randomUUID();
    await registerAda(repository, userId, context);
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('command RegisterUser');
    expect(span.attributes).toEqual({ 'chronicle.stream': `user-${userId}` });
  });

  it('names the span of a command without a type "unknown"', async () => {
    const untyped: Decider<null, object, DomainEvent> = {
      initialState: null,
      evolve: (state) => state,
      decide: () => [],
    };
    await repository.handle(untyped, 'probe-1', () => ({}), context);
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['command unknown']);
  });
});
