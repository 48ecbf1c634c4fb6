import { DeadlineExceededError, UnavailableError } from '@eventstore/db-client';
import { MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { EsdbEventStore, isTransientEsdbError } from './esdb/esdb-event-store';
import { mongoClient } from './processing/mongo/mongo-client';
import { isStoreDamaged, isStoreUnavailable } from './store-unavailable';

const sqlite = (code: string) => Object.assign(new Error(code), { code });
/** What @grpc/grpc-js rejects a call with (a ServiceError): the EventStoreDB client passes some on unwrapped. */
const grpc = (code: number) =>
  Object.assign(new Error(`${code} status`), { code, details: 'No connection established', metadata: {} });

describe('isStoreUnavailable', () => {
  // Before `beforeAll` below: the client libraries' errors count once an adapter uses them, so
  // that this module loads neither library (a process on the embedded default never does).
  it("takes no client library's errors for an outage before an adapter of that library is made", () => {
    expect(isStoreUnavailable(new UnavailableError(new Error('unreachable') as never))).toBe(false);
    expect(isStoreUnavailable(new MongoNetworkError('connection refused'))).toBe(false);
  });

  describe('once the adapters are made', () => {
    // Before each test, not all: Stryker's per-test coverage does not see what runs in beforeAll, and
    // would not run these tests against a mutant of the registration.
    beforeEach(async () => {
      // Neither connects: the EventStoreDB client dials on its first call, and this one is never connected.
      await EsdbEventStore.connect('esdb://127.0.0.1:1?tls=false').close();
      await mongoClient('mongodb://127.0.0.1:1', {}).close();
    });

    it.each([
      ['a full disk', sqlite('SQLITE_FULL')],
      ['an I/O error', sqlite('SQLITE_IOERR_WRITE')],
      ['a lock held too long', sqlite('SQLITE_BUSY')],
      ['a damaged file', sqlite('SQLITE_CORRUPT')],
      ['EventStoreDB unreachable', new UnavailableError(new Error('unreachable') as never)],
      ['EventStoreDB frozen', new DeadlineExceededError(new Error('deadline') as never)],
      ['EventStoreDB never reached (a bare gRPC UNAVAILABLE)', grpc(14)],
      ['EventStoreDB never answering (a bare gRPC DEADLINE_EXCEEDED)', grpc(4)],
      ['MongoDB unreachable', new MongoNetworkError('connection refused')],
      [
        'no MongoDB server to select',
        new MongoServerSelectionError('no server', { type: 'Unknown', servers: new Map() } as never),
      ],
    ])('takes %s for an outage', (_case, error) => {
      expect(isStoreUnavailable(error)).toBe(true);
    });

    it.each([
      ['a constraint', sqlite('SQLITE_CONSTRAINT_UNIQUE')],
      ['a refused MongoDB command', new MongoServerError({ message: 'bad', code: 2 })],
      ['a bug', new TypeError('x is undefined')],
      ['a gRPC call the server refused (INVALID_ARGUMENT)', grpc(3)],
      ['an error with a numeric code and nothing of gRPC', Object.assign(new Error('x'), { code: 14 })],
      ['a gRPC UNAVAILABLE without its metadata', Object.assign(grpc(14), { metadata: undefined })],
      ['a gRPC UNAVAILABLE with null metadata', Object.assign(grpc(14), { metadata: null })],
      ['a gRPC UNAVAILABLE without its details', Object.assign(grpc(14), { details: undefined })],
      ['not an error', 'SQLITE_FULL'],
    ])('does not take %s for one', (_case, error) => {
      expect(isStoreUnavailable(error)).toBe(false);
    });
  });
});

describe('isStoreDamaged', () => {
  it.each([
    ['SQLITE_CORRUPT', true],
    ['SQLITE_CORRUPT_VTAB', true],
    ['SQLITE_NOTADB', true],
    ['SQLITE_FULL', false],
    ['NOT_SQLITE_CORRUPT', false],
  ])('takes an error coded %s as a damaged store: %s', (code, damaged) => {
    expect(isStoreDamaged(sqlite(code))).toBe(damaged);
  });

  it.each([
    ['the code alone', 'SQLITE_CORRUPT'],
    ['null', null],
    ['a numeric code', Object.assign(new Error('x'), { code: 11 })],
  ])('takes %s for no damage', (_case, error) => {
    expect(isStoreDamaged(error)).toBe(false);
  });
});

describe('isTransientEsdbError', () => {
  it('retries a bare gRPC UNAVAILABLE, as the client gives it on a connection it could not open', () => {
    expect(isTransientEsdbError(grpc(14))).toBe(true);
    expect(isTransientEsdbError(new UnavailableError(new Error('unreachable') as never))).toBe(true);
    expect(isTransientEsdbError(grpc(3))).toBe(false);
    expect(isTransientEsdbError(new TypeError('x'))).toBe(false);
  });
});
