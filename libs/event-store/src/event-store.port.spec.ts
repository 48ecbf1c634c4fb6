import {
  CheckpointBeyondHeadError,
  InvalidPositionError,
  WrongExpectedRevisionError,
} from './event-store.port';

describe('the event store port errors', () => {
  it('name a conflict with its stream and both revisions', () => {
    const error = new WrongExpectedRevisionError('user-1', 3, 'no_stream');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('WrongExpectedRevisionError');
    expect(error.message).toBe('Stream user-1: expected revision 3, actual no_stream');
    expect(error).toMatchObject({ stream: 'user-1', expected: 3, actual: 'no_stream' });
  });

  it('name a position the log cannot hold, and why', () => {
    const error = new InvalidPositionError('1:2', 'commit before prepare');
    expect(error.name).toBe('InvalidPositionError');
    expect(error.message).toBe('Position 1:2 is not a position in the event log: commit before prepare');
    expect(error.position).toBe('1:2');
  });

  it('say how to recover from a checkpoint beyond the head, of an empty log or not', () => {
    const tail =
      ': the event store was wiped or replaced while the read store kept its checkpoints. Run ' +
      '`projections rebuild` to rebuild the read models from the event store as it is now.';
    const empty = new CheckpointBeyondHeadError('users', '42', null);
    expect(empty.name).toBe('CheckpointBeyondHeadError');
    expect(empty.message).toBe(
      `The checkpoint of users (42) lies beyond the end of the event log (the log is empty)${tail}`,
    );
    expect(new CheckpointBeyondHeadError('users', '42', '7').message).toBe(
      `The checkpoint of users (42) lies beyond the end of the event log (head 7)${tail}`,
    );
  });
});
