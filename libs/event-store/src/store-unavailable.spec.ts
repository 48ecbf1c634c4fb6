import { DeadlineExceededError, UnavailableError } from '@eventstore/db-client';
import { MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { isStoreUnavailable } from './store-unavailable';

const sqlite = (code: string) => Object.assign(new Error(code), { code });

describe('isStoreUnavailable', () => {
  it.each([
    ['a full disk', sqlite('SQLITE_FULL')],
    ['an I/O error', sqlite('SQLITE_IOERR_WRITE')],
    ['a lock held too long', sqlite('SQLITE_BUSY')],
    ['a damaged file', sqlite('SQLITE_CORRUPT')],
    ['EventStoreDB unreachable', new UnavailableError(new Error('unreachable') as never)],
    ['EventStoreDB frozen', new DeadlineExceededError(new Error('deadline') as never)],
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
    ['not an error', 'SQLITE_FULL'],
  ])('does not take %s for one', (_case, error) => {
    expect(isStoreUnavailable(error)).toBe(false);
  });
});
