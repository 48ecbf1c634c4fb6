import {
  ANY,
  type EventStoreDBClient,
  NO_STREAM,
  type ResolvedEvent,
  STREAM_EXISTS,
} from '@eventstore/db-client';
import { position } from '../position';
import {
  fromResolvedEvent,
  isInvalidArgument,
  isSystemEvent,
  positionOf,
  readLogEnd,
  toChainLink,
  toEsdbExpectedRevision,
} from './esdb-events';

type Stored = NonNullable<ResolvedEvent['event']>;

/** An event as the client hands it over, with `changes` applied. */
function resolved(changes: Partial<Record<keyof Stored, unknown>> = {}): ResolvedEvent {
  return {
    event: {
      streamId: 'user-1',
      id: '0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d',
      revision: 3n,
      type: 'UserRegistered.v1',
      data: { name: 'Ada' },
      metadata: { actor: 'system', correlationId: 'c', hash: 'ab12' },
      isJson: true,
      created: new Date('2026-01-02T03:04:05.678Z'),
      position: { commit: 90n, prepare: 88n },
      ...changes,
    } as Stored,
  };
}

describe('esdb events', () => {
  it("calls a stream or type starting with '$' the server's, and nothing else", () => {
    expect(isSystemEvent('$stats-node', 'UnitTested.v1')).toBe(true);
    expect(isSystemEvent('user-1', '$metadata')).toBe(true);
    expect(isSystemEvent('user-$1', 'User$Registered.v1')).toBe(false);
  });

  it("maps each expected revision to the client's", () => {
    expect(toEsdbExpectedRevision('no_stream')).toBe(NO_STREAM);
    expect(toEsdbExpectedRevision('stream_exists')).toBe(STREAM_EXISTS);
    expect(toEsdbExpectedRevision('any')).toBe(ANY);
    expect(toEsdbExpectedRevision(4)).toBe(4n);
  });

  it('reads an event with the hash taken out of its metadata', () => {
    const event = fromResolvedEvent(resolved());
    expect(event).toEqual({
      id: '0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d',
      type: 'UserRegistered.v1',
      data: { name: 'Ada' },
      metadata: { actor: 'system', correlationId: 'c' },
      stream: 'user-1',
      revision: 3,
      position: position(90, 88),
      recordedAt: '2026-01-02T03:04:05.678Z',
      hash: 'ab12',
    });
    expect(toChainLink(event)).toEqual({
      position: '90:88',
      id: '0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d',
      stream: 'user-1',
      revision: 3,
      type: 'UserRegistered.v1',
      data: '{"name":"Ada"}',
      metadata: '{"actor":"system","correlationId":"c"}',
      recordedAt: '2026-01-02T03:04:05.678Z',
      hash: 'ab12',
    });
  });

  it('reads an event without a hash, or with one that is not text, as unhashed', () => {
    expect(fromResolvedEvent(resolved({ metadata: { actor: 'system' } })).hash).toBe('');
    expect(fromResolvedEvent(resolved({ metadata: { actor: 'system', hash: 12 } })).hash).toBe('');
  });

  it.each([
    ['binary', { isJson: false, data: new Uint8Array([1]) }],
    ['not marked JSON', { isJson: false, data: { name: 'Ada' } }],
    ['an array', { data: [1, 2] }],
    ['null', { data: null }],
    ['bytes marked JSON', { data: new Uint8Array([123, 125]) }],
    ['text', { data: 'text' }],
  ])('fails on an event whose data is %s', (_, changes) => {
    expect(() => fromResolvedEvent(resolved(changes))).toThrow(
      'Event 0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d in user-1 does not hold a JSON object',
    );
  });

  it.each([
    ['an array', []],
    ['null', null],
    ['bytes', new Uint8Array([123, 125])],
  ])('fails on an event whose metadata is %s', (_, metadata) => {
    expect(() => fromResolvedEvent(resolved({ metadata }))).toThrow(
      'Event 0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d in user-1 does not hold JSON metadata',
    );
  });

  it('fails on a link to a deleted event, and on an event without a position', () => {
    expect(() => fromResolvedEvent({})).toThrow('A read returned a link to a deleted event');
    expect(() => positionOf(resolved({ position: undefined }))).toThrow(
      'Event 0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d came without a $all position (server older than 22.6?)',
    );
    expect(() => positionOf({})).toThrow('Event (none) came without a $all position');
  });

  it("reads the end of the log as its last record's position, or null when it is empty", async () => {
    const reading = (records: ResolvedEvent[]) => {
      const asked: unknown[] = [];
      const client = {
        readAll: async function* (options: unknown) {
          asked.push(options);
          await Promise.resolve();
          yield* records;
        },
      } as unknown as EventStoreDBClient;
      return { client, asked };
    };
    const last = reading([resolved({ position: { commit: 7n, prepare: 5n } })]);
    expect(await readLogEnd(last.client)).toEqual(position(7, 5));
    expect(last.asked).toEqual([{ direction: 'backwards', fromPosition: 'end', maxCount: 1 }]);
    expect(await readLogEnd(reading([]).client)).toBeNull();
  });

  it('recognises the server refusing an argument (gRPC code 3) and nothing else', () => {
    expect(isInvalidArgument(Object.assign(new Error('bad position'), { code: 3 }))).toBe(true);
    expect(isInvalidArgument(Object.assign(new Error('unavailable'), { code: 14 }))).toBe(false);
    expect(isInvalidArgument(new Error('no code'))).toBe(false);
    expect(isInvalidArgument(null)).toBe(false);
  });
});
